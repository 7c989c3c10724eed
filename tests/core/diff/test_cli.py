"""``python -m loom_core diff``: exit codes 0/1/2, the human report, ``--json``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.core.clis import core, loom
from tests.core.diff.tracegen import basic_run, model, tool, write


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    b = basic_run()
    b[0] = model("Let me read it.", [("c1", "read_file", {"path": "b.txt"})], 1000, 100, n=0)
    b[1] = tool("read_file", "contents of b.txt", "c1", {"path": "b.txt"})
    b[4] = model("The answer is 43 for sure.", [], 1500, 60, n=2)
    return write(tmp_path / "a.loom.json", basic_run()), write(tmp_path / "b.loom.json", b)


def test_identical_exits_0(tmp_path: Path) -> None:
    a = write(tmp_path / "a.loom.json", basic_run())
    out = core("diff", a, a)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "runs are identical (5 step(s))"
    assert loom("diff", a, a).returncode == 0


def test_different_exits_1_with_a_report(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    out = core("diff", a, b)
    assert out.returncode == 1 and out.stderr == ""
    text = out.stdout
    assert "identical prefix: 0 step(s)" in text
    assert "  a step 0 · b step 0 [results-differ]" in text and "row" not in text
    assert 'args: $.tool_calls[0].args.path: "a.txt" -> "b.txt"' in text
    assert "totals: 2 identical, 2 results-differ, 1 inputs-differ" in text
    assert "tokens: a 3,700 in / 170 out · b 3,700 in / 210 out · delta +0 in / +40 out" in text
    assert "delta +$0.0006" in text  # 40 output tokens at $15 per million
    assert loom("diff", a, b).returncode == 1


def test_word_diff_in_the_report(tmp_path: Path) -> None:
    b = basic_run()
    b[4] = model("The answer is 43 for sure.", [], 1500, 20, n=2)
    a, bp = write(tmp_path / "a.loom.json", basic_run()), write(tmp_path / "b.loom.json", b)
    out = core("diff", a, bp)
    assert out.returncode == 1
    assert "    words: The answer is [-42-] {+43+} for sure." in out.stdout
    assert "identical prefix: 4 step(s)" in out.stdout


def test_json_report(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    out = core("diff", a, b, "--json")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert report["identical"] is False
    assert report["first_divergence"] == {
        "row": 0,
        "status": "results-differ",
        "a_seq": 0,
        "b_seq": 0,
    }
    assert len(report["rows"]) == 5 and report["rows"][4]["output_tokens"] == 40
    assert report["totals"]["delta"]["output_tokens"] == 40
    detail = report["first_divergence_detail"]
    assert {
        "path": "$.tool_calls[0].args.path",
        "op": "changed",
        "old": "a.txt",
        "new": "b.txt",
    } in detail["args_diff"]
    same = json.loads(core("diff", a, a, "--json").stdout)
    assert same["identical"] is True and same["first_divergence_detail"] is None


def _bad(out: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a run that must have failed with exit 2."""
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    return lines[0]


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    good = write(tmp_path / "a.loom.json", basic_run())
    missing = tmp_path / "missing.loom.json"
    assert _bad(core("diff", good, missing)) == f"error: {missing}: no such file"
    not_trace = tmp_path / "x.json"
    not_trace.write_text('{"hello": 1}')
    assert str(not_trace) in _bad(core("diff", not_trace, good))
    text = tmp_path / "notes.txt"
    text.write_text("just words\n")
    assert str(text) in _bad(core("diff", good, text, "--json"))
    assert str(tmp_path) in _bad(core("diff", tmp_path, good))


def test_journal_against_its_trace(tmp_path: Path) -> None:
    from tests.core.harness_runs import journal_complete

    journal, run = journal_complete(tmp_path)
    trace = tmp_path / "complete.loom.json"
    run.save(str(trace))
    out = core("diff", journal, trace)
    assert out.returncode == 0, out.stdout + out.stderr
