"""Our journal writer: loom-harness must take its files for its own.

Why: a journal is only useful if ``Run.recover`` can continue the run it records
and ``loom watch`` can show it. So the oracle is loom-harness itself: re-emitting
a real harness journal line by line must give the same bytes, ``Journal.read_full``
must read our files identically, ``loom watch --once`` must print our effects,
and ``Run.recover`` must replay a journal we wrote for a recorded run (finishing
it, continuing it, or refusing an unfinished tool call).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from loom import Agent, Run
from loom.journal import Journal, UnfinishedEffect

from loom_core.formats import append_file
from loom_core.formats.journal_writer import JournalWriter, effect_line
from tests.core.clis import loom
from tests.core.harness_runs import (
    call,
    crashing_agent,
    journal_complete,
    journal_crashed,
    journal_paused,
    read_file,
    reply,
    scripted,
)

WATCH_LINE = re.compile(r"^  \[\s*(\d+)\] *(\S+)")


def rewrite(source: Path, target: Path, fsync: bool = False) -> None:
    """Write ``source``'s lines again through our writer, as a live run would."""
    with JournalWriter(target, fsync=fsync) as writer:
        for line in source.read_text().splitlines():
            d = json.loads(line)
            kind = d.pop("type")
            if kind == "header":
                writer.header(d["model"], d["system"], d["episodes"])
            elif kind == "intent":
                writer.intent(d["seq"], d["kind"], d["key"], d["depth"])
            else:
                writer.effect(d)


def read_full(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    header, entries, unfinished = Journal.read_full(str(path))
    return header, [e.to_dict() for e in entries], unfinished


@pytest.fixture(scope="module")
def harness_journals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("harness_journals")
    return {
        "complete": journal_complete(out)[0],
        "paused": journal_paused(out),
        "crashed": journal_crashed(out),
    }


@pytest.mark.parametrize("name", ["complete", "paused", "crashed"])
def test_same_bytes_as_loom_harness(
    harness_journals: dict[str, Path], name: str, tmp_path: Path
) -> None:
    ours = tmp_path / f"{name}.jsonl"
    rewrite(harness_journals[name], ours, fsync=name == "complete")
    assert ours.read_bytes() == harness_journals[name].read_bytes()
    assert read_full(ours) == read_full(harness_journals[name])


def test_loom_watch_prints_our_effects(harness_journals: dict[str, Path], tmp_path: Path) -> None:
    ours = tmp_path / "ours.jsonl"
    rewrite(harness_journals["complete"], ours)
    mine, theirs = (
        loom("watch", ours, "--once"),
        loom("watch", harness_journals["complete"], "--once"),
    )
    assert mine.returncode == theirs.returncode == 0
    assert mine.stdout == theirs.stdout
    _, entries, _ = read_full(ours)
    shown = [m.groups() for m in map(WATCH_LINE.match, mine.stdout.splitlines()) if m]
    assert shown == [(str(e["seq"]), e["kind"]) for e in entries]


def tool_agent(path: Path | None, skip: int = 0) -> Agent:
    script = [
        reply(
            "Reading.",
            [call("r1", "read_file", path="a.txt"), call("r2", "read_file", path="b.txt")],
            40,
            4,
        ),
        reply("Both read ✓", [], 60, 6),
    ]
    return Agent(
        name="reader",
        system="You read. ü",
        journal=str(path) if path else None,
        tools=[read_file],
        provider=scripted(*script[skip:]),
    )


def mirror_run(run: Run, path: Path, upto: int | None = None) -> None:
    """Journal a recorded run's effects (the first ``upto``) the way a live run does."""
    with JournalWriter(path) as writer:
        writer.header(run.agent.model, run.agent.system, run.episodes)
        for entry in run.log[:upto]:
            writer.intent(entry.seq, entry.kind, entry.key, entry.depth)
            writer.effect(entry.to_dict())


def test_recover_replays_a_finished_run_we_journaled(tmp_path: Path) -> None:
    recorded = tool_agent(None).run("Read a and b")
    path = tmp_path / "finished.jsonl"
    mirror_run(recorded, path)
    agent = tool_agent(path)
    run = Run.recover(str(path), agent)
    assert run.output == recorded.output == "Both read ✓"
    assert [e.to_dict() for e in run.log] == [e.to_dict() for e in recorded.log]
    assert agent.provider._i == 0  # everything replayed, nothing called
    expected = tmp_path / "expected.jsonl"  # loom rewrote it: header + replayed prefix
    with JournalWriter(expected) as writer:
        writer.header(
            agent.model, agent.system, recorded.episodes, prefix=[e.to_dict() for e in recorded.log]
        )
    assert path.read_bytes() == expected.read_bytes()


def test_recover_continues_a_run_we_journaled_halfway(tmp_path: Path) -> None:
    recorded = tool_agent(None).run("Read a and b")
    path = tmp_path / "half.jsonl"
    mirror_run(recorded, path, upto=2)  # the model call and the first tool call
    run = Run.recover(str(path), tool_agent(path, skip=1))
    assert run.output == recorded.output
    assert [e.to_dict() for e in run.log] == [e.to_dict() for e in recorded.log]


def test_recover_refuses_our_unfinished_tool_intent(
    harness_journals: dict[str, Path], tmp_path: Path
) -> None:
    path = tmp_path / "crashed.jsonl"
    rewrite(harness_journals["crashed"], path)
    _, _, unfinished = read_full(path)
    assert [d["kind"] for d in unfinished] == ["tool:charge_card"]
    with pytest.raises(UnfinishedEffect, match="'tool:charge_card'"):
        Run.recover(str(path), crashing_agent(path, crash=False, skip=1))
    run = Run.recover(str(path), crashing_agent(path, crash=False, skip=1), on_unfinished="retry")
    assert run.output == "charged" and run.log[2].result == "charged 42"


def test_line_shape() -> None:
    entry = {
        "meta": {"agent": "a"},
        "depth": 1,
        "result": {"t": "ü ✓"},
        "key": "k" * 12,
        "kind": "tool:x",
        "seq": 3,
        "extra": True,
    }
    assert list(effect_line(entry)) == [
        "type",
        "seq",
        "kind",
        "key",
        "result",
        "depth",
        "meta",
        "extra",
    ]
    assert list(effect_line({"seq": 0, "kind": "time", "meta": {}})) == [
        "type",
        "seq",
        "kind",
        "key",
        "result",
        "depth",
    ]
    with pytest.raises(ValueError):
        effect_line({"kind": "model"})


def test_writes_are_on_disk_per_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    writer = JournalWriter(path, fsync=True)
    with pytest.raises(ValueError, match="header first"):
        writer.intent(0, "model", "k")
    writer.header("m", "sys ✓", ["go"])
    writer.intent(0, "tool:x", "abc", 2)
    assert path.read_text() == (
        '{"type": "header", "version": 1, "model": "m", "system": "sys \\u2713", '
        '"episodes": ["go"]}\n'
        '{"type": "intent", "seq": 0, "kind": "tool:x", "key": "abc", "depth": 2}\n'
    )
    writer.effect({"seq": 0, "kind": "tool:x", "key": "abc", "result": 27, "depth": 2})
    assert path.read_bytes().count(b"\n") == 3  # flushed before close
    writer.header("m", "again", ["go"])  # a new live run truncates, like loom-harness
    assert path.read_bytes().count(b"\n") == 1
    writer.close()
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.effect({"seq": 1, "kind": "time"})


def test_several_effects_in_one_write_are_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``effects`` (the recording proxy's call: a tool result and a model call per
    exchange) writes what ``effect`` per entry writes, with one write to the file."""
    entries = [
        {"seq": 0, "kind": "tool:x", "key": "k", "result": "ok", "depth": 1},
        {"seq": 1, "kind": "model", "key": "m", "result": {"text": "é"}, "meta": {"a": 1}},
    ]
    one, many = JournalWriter(tmp_path / "one.jsonl"), JournalWriter(tmp_path / "many.jsonl")
    for writer in (one, many):
        writer.header("m", "sys", ["go"])
    for entry in entries:
        one.effect(entry)
    writes: list[bytes] = []
    real = append_file._write
    monkeypatch.setattr(
        append_file, "_write", lambda fd, data: (writes.append(bytes(data)), real(fd, data))[1]
    )
    many.effects(entries)
    many.effects([])  # nothing to write: no write at all
    assert len(writes) == 1  # on disk before the call returned, with one system call
    assert (tmp_path / "many.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    one.close()
    many.close()


def test_a_write_that_fails_leaves_no_torn_line_for_loom_harness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk mid-line: the write raises and the journal is as it was, so the
    next line follows a complete one (loom-harness's reader stops at a torn line)."""
    path = tmp_path / "j.jsonl"
    writer = JournalWriter(path)
    writer.header("m", "sys", ["go"])
    writer.effect({"seq": 0, "kind": "time", "result": 1})
    size = writer.size
    real = append_file._write

    def half_then_full(fd: int, data: Any) -> int:
        if len(data) > 8:
            return real(fd, data[:8])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(append_file, "_write", half_then_full)
    with pytest.raises(OSError, match="No space left"):
        writer.effect({"seq": 1, "kind": "time", "result": 2})
    assert path.stat().st_size == size == writer.size
    monkeypatch.setattr(append_file, "_write", real)
    writer.effect({"seq": 1, "kind": "time", "result": 3})
    writer.cut(size)  # a caller that could not write its other file takes it back
    writer.effect({"seq": 1, "kind": "time", "result": 4})
    writer.close()
    _, effects, _ = Journal.read_full(str(path))
    assert [(e.seq, e.result) for e in effects] == [(0, 1), (1, 4)]
