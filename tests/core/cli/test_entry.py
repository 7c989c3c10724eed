"""``python -m loom_core``: summary facts, the readable timeline, and one-line errors.

Why: the CLI is the headless face used in scripts and CI, so its contract is
exact: ``summary --json`` reports the same facts loom-harness knows, and any
bad input exits 2 with exactly one stderr line naming the file and the cause,
never a traceback. Malformed *payloads* inside a well-formed file are tolerated
the way loom-harness tolerates them (it loads such files), so they exit 0.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from loom import Run

from loom_core.cli.entry import main
from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from tests.core.clis import core
from tests.core.formats.test_wirelog import anthropic_exchanges, write_wirelog
from tests.core.harness_runs import Recorded, journal_crashed, journal_paused

STEP_LINE = re.compile(r"^([ !])\[\s*(\d*)\] ( *)(\S+)")


def test_summary_json_of_a_trace(harness_traces: dict[str, Recorded]) -> None:
    rec = harness_traces["tools"]
    done = core("summary", rec.path, "--json")
    assert done.returncode == 0 and done.stderr == ""
    facts = json.loads(done.stdout)
    run = Run.load(str(rec.path))
    assert facts["format"] == "trace" and facts["version"] == 2 and facts["recorded_via"] is None
    assert facts["effects"] == len(run.log)
    assert facts["kinds"] == [e.kind for e in run.log] and facts["depths"] == [0]
    assert (
        (facts["input_tokens"], facts["output_tokens"])
        == (820, 62)
        == (run.cost()["input_tokens"], run.cost()["output_tokens"])
    )
    assert (facts["output"], facts["episodes"]) == (run.output, run.episodes)
    assert (facts["paused"], facts["truncated"], facts["stop_reason"]) == (False, False, "")
    assert facts["shield_events"] == 0 and facts["checksum"] == "valid"
    assert facts["cost_usd"] == pytest.approx((820 * 3.0 + 62 * 15.0) / 1e6)  # claude-sonnet-4-5
    assert "unfinished" not in facts and "torn" not in facts


def test_summary_json_of_a_budget_stop(harness_traces: dict[str, Recorded]) -> None:
    facts = json.loads(core("summary", harness_traces["budget"].path, "--json").stdout)
    # loom-harness's scripted provider answers offline: free, not unknown
    assert (facts["truncated"], facts["stop_reason"], facts["cost_usd"]) == (True, "budget", 0.0)


def test_summary_json_of_journals(tmp_path: Path) -> None:
    paused = json.loads(core("summary", journal_paused(tmp_path), "--json").stdout)
    assert (paused["format"], paused["version"], paused["checksum"]) == ("journal", 1, "absent")
    assert paused["unfinished"] == [{"seq": 1, "kind": "human"}] and paused["paused"] is True
    assert paused["torn"] is False and paused["output"] == "" and paused["effects"] == 1
    crashed_path = journal_crashed(tmp_path)
    crashed_path.write_bytes(crashed_path.read_bytes() + b'{"type": "eff')
    crashed = json.loads(core("summary", crashed_path, "--json").stdout)
    assert crashed["unfinished"] == [{"seq": 2, "kind": "tool:charge_card"}]
    assert (crashed["torn"], crashed["paused"], crashed["truncated"]) == (True, False, True)
    assert crashed["kinds"] == ["model", "tool:read_file"]


def test_summary_json_of_a_wirelog(tmp_path: Path) -> None:
    path = write_wirelog(tmp_path / "s.wirelog", anthropic_exchanges())
    facts = json.loads(core("summary", path, "--json").stdout)
    assert (facts["format"], facts["recorded_via"], facts["shield_events"]) == (
        "wirelog",
        "proxy",
        1,
    )
    assert facts["kinds"] == ["model", "tool:get_weather", "model", "model"]
    assert facts["cost_usd"] == pytest.approx((1530 * 3.0 + 105 * 15.0) / 1e6)


@pytest.mark.parametrize("name", ["tools", "subagent", "unicode", "resumed_child"])
def test_readable_timeline(harness_traces: dict[str, Recorded], name: str) -> None:
    rec = harness_traces[name]
    done = core("summary", rec.path)
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    doc = load(rec.path)
    tl = build_timeline(doc)
    assert lines[0].startswith(f"trace v2  model: {doc.header.model}  |  prompt: ")
    assert doc.episodes[0].split()[0] in lines[0]  # non-ASCII printed as is
    steps = lines[1 : 1 + len(tl)]
    for s, line in enumerate(steps):
        m = STEP_LINE.match(line)
        assert m, line
        mark, seq, indent, kind = m.groups()
        assert kind == tl.kind_name(s) and len(indent) == 2 * tl.depth[s]
        e = tl.effect_of[s]
        assert seq == ("" if e < 0 else str(doc.effects[e].seq))
        result = doc.result(e) if e >= 0 else None
        bad = isinstance(result, str) and result.startswith(("ERROR:", "BLOCKED:"))
        assert (mark == "!") == bad
    assert lines[1 + len(tl)] == (
        f"{len(doc)} effect(s), {tl.input_tokens} in / "
        f"{tl.output_tokens} out tokens, cost "
        + (
            "unknown (unpriced model)"
            if tl.total_cost is None
            else "$0 offline"
            if doc.header.model == "scripted"
            else f"${tl.total_cost:.4f}"
        )
    )
    assert lines[2 + len(tl) :] == ["checksum: valid"]


def test_readable_timeline_warns_about_a_modified_trace(
    harness_traces: dict[str, Recorded], tmp_path: Path
) -> None:
    data = json.loads(harness_traces["tools"].path.read_text())
    data["output"] = "edited"
    (tmp_path / "t.loom.json").write_text(json.dumps(data))
    done = core("summary", tmp_path / "t.loom.json")
    assert done.returncode == 0
    assert (
        done.stdout.splitlines()[-1]
        == "checksum: mismatch  (WARNING: modified after it was written)"
    )


def _trace(**entry: Any) -> bytes:
    return json.dumps(
        {
            "version": 2,
            "prompt": "p",
            "output": "",
            "log": [
                {
                    "seq": 0,
                    "kind": "model",
                    "key": "k",
                    "result": {"text": "t"},
                    "depth": 0,
                    **entry,
                }
            ],
        }
    ).encode()


def _write(content: bytes | None) -> Callable[[Path], Path]:
    def make(dir_: Path) -> Path:
        path = dir_ / "input.loom.json"
        if content is not None:
            path.write_bytes(content)
        return path

    return make


def _truncated(dir_: Path) -> Path:
    path = dir_ / "cut.loom.json"
    path.write_bytes(json.dumps(json.loads(_trace()), indent=2).encode()[:60])
    return path


def _directory(dir_: Path) -> Path:
    (dir_ / "a_dir.loom.json").mkdir()
    return dir_ / "a_dir.loom.json"


BAD_INPUTS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "missing file": (_write(None), "no such file"),
    "directory": (_directory, "directory"),
    "empty file": (_write(b""), "empty"),
    "only whitespace": (_write(b"  \n\n\t"), "empty"),
    "not JSON": (_write(b"this is not json\n"), "not valid JSON"),
    "JSON array": (_write(b"[1, 2, 3]"), "not an object"),
    "JSON string": (_write(b'"a string"'), "not an object"),
    "object without log": (_write(b'{"prompt": "", "output": ""}'), "no 'log'"),
    "log not a list": (_write(b'{"log": {"seq": 0}}'), "'log' is not a list"),
    "truncated file": (_truncated, "truncated"),
    "version 3": (_write(b'{"version": 3, "prompt": "", "output": "", "log": []}'), "newer"),
    "version a string": (_write(b'{"version": "two", "log": []}'), "version"),
    "version out of range": (
        _write(b'{"log": [], "version": 1e400}'),
        "number out of range in member 'version'",
    ),
    "deep nesting": (
        _write(b'{"log": [], "x": ' + b"[" * 1000 + b"]" * 1000 + b"}"),
        "nested too deeply",
    ),
    "deep nesting in a journal": (
        _write(b'{"type": "header", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}\n"),
        "nested too deeply",
    ),
    "not UTF-8": (_write(b'{"log": [], "prompt": "caf\xe9", "output": ""}'), "UTF-8"),
    "journal only intents": (
        _write(b'{"type": "intent", "seq": 0}\n{"type": "intent"}\n'),
        "not a loom journal",
    ),
    "wirelog without exchange": (
        _write(b'{"request": {}, "response": 5}\n{"request": 1, "response": 2}\n'),
        "no complete exchange",
    ),
}


@pytest.fixture(scope="module")
def bad_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[Path, subprocess.CompletedProcess[str]]]:
    """``summary`` on every bad input, run a few at a time (each is a fresh interpreter)."""
    paths = {case: make(tmp_path_factory.mktemp("bad")) for case, (make, _) in BAD_INPUTS.items()}
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip(paths, pool.map(lambda p: core("summary", p), paths.values()), strict=True))
    return {case: (paths[case], done[case]) for case in paths}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_with_one_line(
    case: str, bad_runs: dict[str, tuple[Path, subprocess.CompletedProcess[str]]]
) -> None:
    path, done = bad_runs[case]
    cause = BAD_INPUTS[case][1]
    assert done.returncode == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and cause in lines[0], lines


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_every_subcommand_reports_bad_input_the_same_way(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = BAD_INPUTS[case][0](tmp_path)
    for argv in (
        ["summary", str(path), "--json"],
        ["checksum", str(path)],
        ["steps", str(path)],
        ["steps", str(path), "--json"],
        ["convert", str(path), "-o", str(tmp_path / "out.loom.json")],
    ):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1 and str(path) in err
    assert not (tmp_path / "out.loom.json").exists()


TOLERATED = {
    "model text is a number": _trace(result={"text": 5}),
    "tool_calls is a string": _trace(result={"text": "", "tool_calls": "x"}),
    "negative depth": _trace(depth=-1),
    "depth far too deep": _trace(depth=10**6),
    "absurd token counts": _trace(
        result={"usage": {"input_tokens": 10**30, "output_tokens": 1e300}}
    ),
    "number out of range": _trace(
        result={"text": "t", "usage": {"input_tokens": 1}}, extra=1e300
    ).replace(b"1e+300", b"1e400"),
    "lone surrogate": b'{"log": [], "model": "\\ud800"}',  # loom-harness loads it too
    "wire is null": json.dumps({"log": [], "prompt": "", "output": "", "wire": None}).encode(),
    "time out of range": json.dumps(
        {"log": [{"kind": "time", "result": 1e30}], "prompt": "", "output": ""}
    ).encode(),
    "edit snapshot not a list": json.dumps(
        {
            "prompt": "",
            "output": "",
            "log": [
                {"kind": "model", "result": {"text": "a"}},
                {"kind": "edit", "result": 5},
                {"kind": "model", "result": {"text": "b"}},
            ],
        }
    ).encode(),
}


@pytest.mark.parametrize("case", sorted(TOLERATED))
def test_malformed_payloads_are_tolerated_not_tracebacks(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(TOLERATED[case])(tmp_path)
    done = core("summary", path)  # the readable form touches every step's payload
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.splitlines()[-1].startswith(("checksum:", "warning:"))
    assert main(["summary", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["effects"] == len(load(path))
    assert main(["steps", str(path), "--json"]) == 0  # every row's payload, as the app reads it
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len([r for r in rows if r["kind"] != "prompt"]) == len(load(path))


WRONGLY_TYPED = {
    "seq is a string": (_trace(seq="x"), "log[0]: field 'seq' has the wrong type"),
    "depth is a string": (_trace(depth="deep"), "seq 0: field 'depth' has the wrong type"),
    "meta not an object": (_trace(meta="m"), "field 'meta' has the wrong type, shown raw: \"m\""),
    "meta tools not a list": (_trace(meta={"tools": 5}), "field 'meta.tools' has the wrong type"),
    "seq out of range": (
        _trace(seq=1).replace(b'"seq": 1', b'"seq": 1e400'),
        "log[0]: field 'seq' is a number out of range (1e400)",
    ),
    "episodes a string": (b'{"log": [], "episodes": "hi"}', "member 'episodes' has the wrong"),
    "output out of range": (b'{"log": [], "output": 1e400}', "member 'output' is a number out"),
    "journal bad seq": (
        b'{"type": "header", "version": 1}\n{"type": "effect", "seq": "x"}\n',
        "line 2: field 'seq' has the wrong type, shown raw: \"x\"",
    ),
    "journal bad header": (
        b'{"type": "header", "episodes": "x"}\n{"type": "effect"}\n',
        "header member 'episodes' has the wrong type",
    ),
    "journal effect out of range": (
        b'{"type": "header"}\n{"type": "effect", "seq": 0, "kind": '
        b'"model", "result": {"text": "a", "x": 1e400}}\n',
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(WRONGLY_TYPED))
def test_wrongly_typed_fields_are_read_and_marked(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 12: any JSON value in any field is read; the wrong type is named as a warning."""
    data, warning = WRONGLY_TYPED[case]
    path = _write(data)(tmp_path)
    for argv in (
        ["summary", str(path)],
        ["convert", str(path), "-o", str(tmp_path / "o.json")],
        ["doctor", str(path)],
    ):
        assert main(argv) == 0, argv
    out = capsys.readouterr().out
    if warning is not None:
        assert "warning: " in out and warning in out, out
    assert main(["summary", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["effects"] == len(load(path))
    assert warning is None or any(warning in w for w in summary["warnings"])


def test_malformed_exchange_in_a_wirelog_is_skipped(tmp_path: Path) -> None:
    exchanges = anthropic_exchanges()
    exchanges.insert(1, {"request": {"messages": 5}, "response": {"content": 5}})
    path = write_wirelog(tmp_path / "m.wirelog", exchanges)
    done = core("summary", path)
    assert done.returncode == 0 and "warning: 1 unreadable line(s) skipped" in done.stdout


def test_convert_round_trips(harness_traces: dict[str, Recorded], tmp_path: Path) -> None:
    src = harness_traces["subagent"].path
    once, twice = tmp_path / "once.loom.json", tmp_path / "twice.loom.json"
    done = core("convert", src, "-o", once)
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.strip() == f"wrote {once}: 7 effect(s) from a trace"
    assert core("convert", once, "-o", twice).returncode == 0
    assert once.read_bytes() == twice.read_bytes() == src.read_bytes()
    in_place = tmp_path / "in_place.loom.json"
    in_place.write_bytes(src.read_bytes())
    assert core("convert", in_place, "-o", in_place).returncode == 2  # not without --force
    assert core("convert", in_place, "-o", in_place, "--force").returncode == 0
    assert in_place.read_bytes() == src.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left


def test_convert_to_an_unwritable_place(
    harness_traces: dict[str, Recorded], tmp_path: Path
) -> None:
    target = tmp_path / "no" / "such" / "dir" / "out.loom.json"
    done = core("convert", harness_traces["tools"].path, "-o", target)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [f"error: {target}: cannot write: No such file or directory"]
