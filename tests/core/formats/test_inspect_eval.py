"""Inspect AI ``.eval`` logs, written by inspect-ai itself, read as loom runs.

Every fact is checked against what inspect reads back from its own log
(``tests/inspect_producer.py``: ``read_eval_log`` in the producer's process), never
against our own reading: model and tool calls, sub-agent calls, token totals with
cache and reasoning, the exact messages each call was sent, errors and approvals.
The test process never imports inspect-ai, so its zip monkey-patch cannot hide ours.
"""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

from loom_core.errors import LoadError
from loom_core.formats.inspect_eval import load_sample, parse_sample_spec, sniff
from loom_core.formats.inspect_values import text_of
from loom_core.formats.loader import load, load_bytes
from loom_core.formats.zipread import ZIP_ZSTANDARD, _bounded
from tests.core.clis import core, loom
from tests.inspect_producer import eval_log


@pytest.fixture(scope="module")
def log() -> Path:
    return eval_log()


@pytest.fixture(scope="module")
def facts(log: Path) -> dict[str, Any]:
    return json.loads(Path(str(log) + ".facts.json").read_text())


def _sample(log: Path, key: str) -> Any:
    sid, epoch = parse_sample_spec(key)
    return load_sample(log.read_bytes(), str(log), sid, epoch)


def test_the_producer_compresses_with_zstandard(log: Path) -> None:
    """So the members we read below went through our Zstandard path, not zipfile's."""
    with zipfile.ZipFile(log) as zf:
        assert {i.compress_type for i in zf.infolist()} == {ZIP_ZSTANDARD}


def test_every_sample_is_listed_and_the_first_opens_by_default(
    log: Path, facts: dict[str, Any]
) -> None:
    doc = load(log)
    assert doc.format == "inspect"
    listed = [f"{s['id']}:{s['epoch']}" for s in doc.extra["samples"]]
    assert listed == facts["order"]  # inspect's own order: epoch, then id
    first = facts["order"][0]
    assert f"{doc.extra['sample']['id']}:{doc.extra['sample']['epoch']}" == first
    assert "And 1+1?" in doc.extra["samples"][0]["label"]
    assert doc.extra["samples"][0]["label"].endswith(" · match: I")  # the scorer names it


@pytest.mark.parametrize("key", ["7:1", "a:1", "7:2", "a:2"])
def test_calls_tokens_and_depth_match_the_producer(
    log: Path, facts: dict[str, Any], key: str
) -> None:
    want = facts[key]
    doc = _sample(log, key)
    kinds = [e.kind for e in doc.effects]
    models = [i for i, k in enumerate(kinds) if k == "model"]
    assert len(models) == want["model_calls"]
    tools = [k.removeprefix("tool:") for k in kinds if k.startswith("tool:")]
    assert sorted(tools) == sorted(want["tool_calls"])
    assert sum(doc.effects[i].depth == 1 for i in models) == want["helper_calls"]
    deepest = max(i for i, e in enumerate(doc.effects) if e.depth == 1)
    assert kinds.index("tool:helper") == deepest + 1  # the sub-agent's answer, after its work
    usage = [doc.result(i)["usage"] for i in models]
    assert sum(u["input_tokens"] for u in usage) == want["input_tokens"]
    assert sum(u["output_tokens"] for u in usage) == want["output_tokens"]
    assert sum(u.get("cache_read_input_tokens", 0) for u in usage) == want["cache_read"]
    assert sum(u.get("cache_creation_input_tokens", 0) for u in usage) == want["cache_write"]
    assert sum(u["output_tokens_details"]["reasoning_tokens"] for u in usage) == want["reasoning"]
    assert [doc.result(i)["text"] for i in models] == want["texts"]
    assert want["model_usage"] == {"mockllm/model": want["input_tokens"]}


@pytest.mark.parametrize("key", ["7:1", "a:2"])
def test_each_call_keeps_the_messages_it_was_sent(
    log: Path, facts: dict[str, Any], key: str
) -> None:
    doc = _sample(log, key)
    models = [i for i, e in enumerate(doc.effects) if e.kind == "model"]
    sent = [[[m["role"], text_of(m["content"])] for m in doc.extra["inputs"][i]] for i in models]
    assert sent == facts[key]["inputs"]
    assert doc.header.system == facts[key]["inputs"][0][0][1]  # the agent's system prompt
    record = doc.extra["records"][models[0]]
    assert record["event"] == "model" and record["model"] == "mockllm/model"


def test_errors_and_approvals_are_steps(log: Path, facts: dict[str, Any]) -> None:
    doc = _sample(log, "7:1")
    results = [doc.result(i) for i, e in enumerate(doc.effects) if e.kind.startswith("tool:")]
    failed = [r for r in results if isinstance(r, str) and r.startswith(("ERROR:", "BLOCKED:"))]
    assert len(failed) == len(facts["7:1"]["tool_errors"])
    for message, result in zip(facts["7:1"]["tool_errors"], failed, strict=True):
        assert message in result
    assert any(r.startswith("BLOCKED: secret") for r in failed)  # the approver said no
    humans = [doc.result(i) for i, e in enumerate(doc.effects) if e.kind == "human"]
    assert [h.split(":")[0] for h in humans] == facts["7:1"]["approvals"]


def test_convert_writes_a_trace_loom_harness_verifies(log: Path, tmp_path: Path) -> None:
    from loom import Run  # loom-harness, the format oracle

    out = tmp_path / "a2.loom.json"
    done = core("convert", log, "--sample", "a:2", "-o", out)
    assert done.returncode == 0, done.stderr
    assert "effect(s) from an Inspect AI log" in done.stderr
    assert loom("trace", "verify", out).returncode == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # loads without a warning
        run = Run.load(str(out))
    assert len(run.log) == len(_sample(log, "a:2").effects)


def test_summary_json_has_the_keys_of_a_loom_trace(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.loom.json"
    assert core("convert", log, "-o", out).returncode == 0
    ours = core("summary", "--json", "--sample", "7:2", log)
    theirs = core("summary", "--json", out)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
    assert a.keys() == b.keys()
    assert (a["format"], b["format"]) == ("inspect", "trace")
    assert a["kinds"] == b["kinds"] and a["input_tokens"] == b["input_tokens"]
    steps = core("steps", "--json", "--sample", "a", log)
    assert steps.returncode == 0 and len(steps.stdout.splitlines()) > 5


def test_a_missing_sample_or_a_non_inspect_file_is_one_line(log: Path, tmp_path: Path) -> None:
    done = core("summary", "--sample", "nope:3", log)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "no sample nope epoch 3" in done.stderr and "7:1" in done.stderr
    trace = tmp_path / "t.loom.json"
    core("convert", log, "-o", trace)
    done = core("steps", "--sample", "1", trace)
    assert done.returncode == 2 and "not one" in done.stderr


def _rezip(log: Path, change: Any = None, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """The log's members (read by us) written again, with ``change(name, data)`` applied."""
    source = log.read_bytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(log) as zf, zipfile.ZipFile(buf, "w", compression) as out:
        from loom_core.formats.zipread import read_member

        for name in zf.namelist():
            data = read_member(zf, name, source, str(log))
            out.writestr(name, change(name, data) if change else data)
    return buf.getvalue()


def test_a_deflated_log_reads_the_same(log: Path) -> None:
    """Older inspect versions deflated the members."""
    doc = load_bytes(_rezip(log), "old.eval")
    assert [e.kind for e in doc.effects] == [e.kind for e in load(log).effects]


def test_only_the_chosen_sample_is_read(log: Path) -> None:
    """A damaged other sample does not stop this one: nothing else is decoded."""
    data = _rezip(log, lambda name, d: b"{not json" if name == "samples/a_epoch_2.json" else d)
    assert len(load_bytes(data, "x.eval").effects) > 5
    with pytest.raises(LoadError, match="samples/a_epoch_2.json is not an Inspect sample"):
        load_sample(data, "x.eval", "a", 2)


@pytest.mark.parametrize(
    ("make", "cause"),
    [
        (lambda d: b"garbage, not a zip", "not an Inspect AI log"),
        (lambda d: d[: len(d) // 2], "not a readable zip archive"),
        (lambda d: _zip({"notes.txt": b"hi"}), "not an Inspect AI log (no header.json)"),
        (lambda d: _zip({"header.json": b"{}"}), "holds no samples"),
        (lambda d: _zip({"header.json": b"[1, 2]"}), "header.json is not an Inspect header"),
        (lambda d: _needs_version(d, 64), "not a readable zip archive (zip file version 6.4)"),
    ],
)
def test_bad_input_is_a_load_error_naming_the_cause(log: Path, make: Any, cause: str) -> None:
    with pytest.raises(LoadError, match=cause.replace("(", r"\(").replace(")", r"\)")):
        load_bytes(make(log.read_bytes()), "bad.eval")


def test_a_corrupt_zstandard_member_names_the_member(log: Path) -> None:
    data = bytearray(log.read_bytes())
    with zipfile.ZipFile(log) as zf:
        info = zf.getinfo("samples/7_epoch_1.json")
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    data[at : at + 8] = b"\xff" * 8
    with pytest.raises(LoadError, match="samples/7_epoch_1.json is damaged"):
        load_bytes(bytes(data), "bad.eval")


def _needs_version(data: bytes, version: int) -> bytes:
    """``data`` whose last central directory entry asks for a later zip version to extract
    (APPNOTE.TXT 4.3.12: the 2 bytes after the signature and the version made by). The last
    signature is the directory's: the first could be compressed bytes that happen to match."""
    at = data.rindex(b"PK\x01\x02") + 6
    return data[:at] + version.to_bytes(2, "little") + data[at + 2 :]


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_sniff_claims_inspect_zips_and_eval_names_only(log: Path) -> None:
    head = log.read_bytes()[:65536]
    assert sniff(head, "renamed.bin")
    assert sniff(b"anything", "run.EVAL")
    assert not sniff(_zip({"notes.txt": b"x"}), "x.zip")
    assert not sniff(b'{"version": 2}', "t.loom.json")
    assert parse_sample_spec("a:b:3") == ("a:b", 3) and parse_sample_spec("x:") == ("x:", None)


def test_a_member_larger_than_its_entry_says_is_refused(log: Path) -> None:
    """The directory says 10 bytes: decompression stops after 11 and names the member."""
    data = bytearray(log.read_bytes())
    name = b"samples/7_epoch_1.json"
    at = data.find(name)
    while at >= 0 and data[at - 46 : at - 42] != b"PK\x01\x02":  # the directory entry's
        at = data.find(name, at + 1)
    assert at >= 0
    size = at - 46 + 24  # uncompressed size (APPNOTE.TXT §4.3.12)
    assert int.from_bytes(data[size : size + 4], "little") > 10
    data[size : size + 4] = (10).to_bytes(4, "little")
    with pytest.raises(LoadError, match="samples/7_epoch_1.json is damaged"):
        load_sample(bytes(data), "bomb.eval", "7", 1)
    assert len(_bounded(io.BytesIO(b"x" * 10**6), 10)) == 11  # read no further than that


def test_an_older_log_without_a_message_pool_reads_the_same(log: Path) -> None:
    """Before the message pool (events_data), each model event held its input inline."""
    key = "samples/a_epoch_1.json"

    def unpooled(name: str, data: bytes) -> bytes:
        if name != key:
            return data
        sample = json.loads(data)
        pool = sample.pop("events_data")["messages"]
        for event in sample["events"]:
            if event["event"] == "model":
                refs = event.pop("input_refs")
                event["input"] = [m for a, b in refs for m in pool[a:b]]
        return json.dumps(sample).encode()

    old = load_sample(_rezip(log, unpooled), "old.eval", "a", 1)
    new = _sample(log, "a:1")
    models = [i for i, e in enumerate(new.effects) if e.kind == "model"]
    assert [old.extra["inputs"][i] for i in models] == [new.extra["inputs"][i] for i in models]
    assert old.header.system == new.header.system and len(old.effects) == len(new.effects)


def test_a_log_still_being_written_opens_from_its_journal(log: Path) -> None:
    """While inspect runs there is no header.json yet: _journal/start.json and the samples
    flushed so far (labels from _journal/summaries)."""
    finished = ("header.json", "summaries.json", "reductions.json", "samples/a_epoch_2.json")
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(_rezip(log))) as zf, zipfile.ZipFile(buf, "w") as out:
        for name in zf.namelist():
            if name not in finished:
                out.writestr(name, zf.read(name))
    doc = load_bytes(buf.getvalue(), "running.eval")
    assert doc.header.model == "mockllm/model"
    assert [f"{s['id']}:{s['epoch']}" for s in doc.extra["samples"]] == ["7:1", "a:1", "7:2"]
    assert "What is 2+3?" in doc.extra["samples"][1]["label"]


def test_an_event_that_is_not_an_object_is_skipped_and_said(log: Path) -> None:
    def spoil(name: str, data: bytes) -> bytes:
        if name != "samples/7_epoch_1.json":
            return data
        sample = json.loads(data)
        sample["events"][2] = 5
        return json.dumps(sample).encode()

    doc = load_bytes(_rezip(log, spoil), "spoilt.eval")
    assert len(doc.effects) == len(load(log).effects)
    assert any("1 event(s) of samples/7_epoch_1.json are not event" in w for w in doc.warnings)


def test_the_run_starts_when_the_eval_was_created(log: Path) -> None:
    """The Runs page's "When" is the eval's own time, not the file's mtime."""
    from datetime import datetime

    from loom_core.formats.zipread import open_zip, read_member
    from loom_core.library.extract import run_facts, step_texts

    data = log.read_bytes()
    with open_zip(data, str(log)) as zf:
        created = json.loads(read_member(zf, "header.json", data, str(log)))["eval"]["created"]
    doc = load(log)
    assert doc.extra["started"] == created
    want = datetime.fromisoformat(created).timestamp()
    assert run_facts(doc, step_texts(doc)).started == pytest.approx(want)
