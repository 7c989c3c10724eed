"""Durable-run journals: loom_core must read them exactly as loom-harness recovers them.

Why: a journal is what is left after a crash or a pause, which is exactly when
someone opens the debugger. The reference for "what a journal says" is
``loom.journal.Journal.read_full`` (the reader ``Run.recover`` uses): the same
effects, the same unfinished intents, the same stop at a torn line. A converted
journal must be a trace loom-harness loads without a murmur.
"""

from __future__ import annotations

import json
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from loom import Run
from loom.journal import Journal, UnfinishedEffect

from loom_core.formats.canonical import effect_key
from loom_core.formats.loader import load
from loom_core.formats.trace import checksum_state
from loom_core.views.frames import frame_at, neutral_messages
from loom_core.views.summary import summarize
from loom_core.views.timeline import F_UNFINISHED, build_timeline
from tests.core.clis import core, loom
from tests.core.harness_runs import (
    crashing_agent,
    journal_complete,
    journal_crashed,
    journal_paused,
    journal_torn,
    paused_journal_agent,
)

NAMES = (
    "complete",
    "paused",
    "crashed",
    "torn",
    "garbage",
    "blank_lines",
    "resumed",
    "two_headers",
)
TORN = {"torn", "garbage"}


@dataclass
class Journals:
    """Every journal scenario by name, and the finished run behind ``complete``."""

    paths: dict[str, Path]
    complete_run: Run


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> Journals:
    out = tmp_path_factory.mktemp("journals")
    complete, run = journal_complete(out)
    paths = {"complete": complete, "paused": journal_paused(out), "crashed": journal_crashed(out)}
    paths["torn"] = journal_torn(complete, out / "torn.jsonl")
    lines = complete.read_bytes().splitlines(keepends=True)
    paths["garbage"] = out / "garbage.jsonl"  # the reader stops at the first bad line
    paths["garbage"].write_bytes(b"".join(lines[:4]) + b"<<not json>>\n" + b"".join(lines[4:]))
    paths["blank_lines"] = out / "blank.jsonl"
    paths["blank_lines"].write_bytes(b"\n".join(lines) + b"\n  \n")
    paths["resumed"] = out / "resumed.jsonl"  # resume() rewrites header + replayed prefix
    paused_journal_agent(paths["resumed"]).run("Go somewhere").resume("yes")
    paths["two_headers"] = out / "two.jsonl"  # a second header clears pending intents only
    paths["two_headers"].write_bytes(paths["paused"].read_bytes() + paths["resumed"].read_bytes())
    return Journals(paths, run)


@pytest.fixture(params=NAMES)
def name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_effects_and_intents_match_read_full(journals: Journals, name: str) -> None:
    path = journals.paths[name]
    doc = load(path)
    header, entries, unfinished = Journal.read_full(str(path))
    assert doc.format == "journal"
    # only a torn or garbage line is worth a note: which line, and that reading stopped there
    assert all(w.startswith("line ") and "read up to line" in w for w in doc.warnings)
    assert [json.loads(doc.raw_entry(i)) for i in range(len(doc))] == [
        {"type": "effect", **e.to_dict()} for e in entries
    ]
    for i, entry in enumerate(entries):
        eff = doc.effects[i]
        assert (eff.seq, eff.kind, eff.key, eff.depth) == (
            entry.seq,
            entry.kind,
            entry.key,
            entry.depth,
        )
        assert doc.result(i) == entry.result and doc.meta(i).agent == entry.meta.get("agent")
    assert [(u.seq, u.kind, u.depth) for u in doc.unfinished] == [
        (d["seq"], d["kind"], d["depth"]) for d in unfinished
    ]
    assert (doc.episodes, doc.header.model, doc.header.system) == (
        header["episodes"],
        header["model"],
        header["system"],
    )
    assert doc.torn == (name in TORN)
    assert doc.header.paused == any(d["kind"] == "human" for d in unfinished)
    facts = summarize(doc, checksum_state(doc))
    assert (facts["version"], facts["checksum"], facts["torn"]) == (1, "absent", doc.torn)
    assert facts["unfinished"] == [{"seq": d["seq"], "kind": d["kind"]} for d in unfinished]


def test_expected_scenario_shapes(journals: Journals) -> None:
    """Guards the fixtures themselves: each scenario ends the way its name says."""
    ends = {n: [(u.kind, u.seq) for u in load(p).unfinished] for n, p in journals.paths.items()}
    assert ends["complete"] == ends["blank_lines"] == ends["resumed"] == ends["two_headers"] == []
    assert ends["paused"] == [("human", 1)]
    assert ends["crashed"] == [("tool:charge_card", 2)]
    assert ends["torn"] == [("tool:explode", 3)]
    assert len(load(journals.paths["garbage"])) == 1  # only the time effect precedes the junk
    assert "resumed" in [e.key for e in load(journals.paths["resumed"]).effects]


def test_last_step_is_flagged_unfinished(journals: Journals, name: str) -> None:
    doc = load(journals.paths[name])
    tl = build_timeline(doc)
    flagged = [s for s in range(len(tl)) if tl.flags[s] & F_UNFINISHED]
    assert flagged == ([len(tl) - 1] if doc.unfinished else [])
    _header, entries, _ = Journal.read_full(str(journals.paths[name]))
    spent = [e.result["usage"] for e in entries if e.kind == "model"]
    assert tl.input_tokens == sum(u.get("input_tokens", 0) for u in spent)
    assert tl.output_tokens == sum(u.get("output_tokens", 0) for u in spent)


def test_convert_gives_a_trace_loom_accepts(journals: Journals, name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.loom.json"
    done = core("convert", journals.paths[name], "-o", out)
    assert done.returncode == 0, done.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = Run.load(str(out))
    header, entries, unfinished = Journal.read_full(str(journals.paths[name]))
    assert [e.to_dict() for e in run.log] == [e.to_dict() for e in entries]
    assert run.episodes == header["episodes"]
    assert run.paused == any(d["kind"] == "human" for d in unfinished)
    assert run.truncated == bool(unfinished or name in TORN)
    assert loom("trace", "verify", out).returncode == 0
    assert loom("timeline", out).returncode == 0
    assert checksum_state(load(out)) == "valid"


def test_converted_finished_journal_is_the_harness_trace(
    journals: Journals, tmp_path: Path
) -> None:
    """A finished run's journal carries everything its trace does: same bytes."""
    theirs, ours = tmp_path / "harness.loom.json", tmp_path / "converted.loom.json"
    journals.complete_run.save(str(theirs))
    assert core("convert", journals.paths["complete"], "-o", ours).returncode == 0
    assert json.loads(ours.read_text()) == json.loads(theirs.read_text())
    assert ours.read_bytes() == theirs.read_bytes()


def test_journal_frames_reproduce_model_keys(journals: Journals) -> None:
    doc = load(journals.paths["complete"])
    context = build_timeline(doc).context
    assert context is not None
    agent = journals.complete_run.agent
    tools = [t.schema() for t in agent.tools.values()]
    checked = 0
    for e, eff in enumerate(doc.effects):
        frame = frame_at(context, e)
        if frame is None:
            continue
        payload = {"system": frame.system()[0], "messages": neutral_messages(frame), "tools": tools}
        assert effect_key("model", payload) == eff.key
        checked += 1
    assert checked == 3


def test_recover_refuses_the_crashed_tool_we_report(journals: Journals, tmp_path: Path) -> None:
    path = tmp_path / "crashed.jsonl"
    shutil.copy(journals.paths["crashed"], path)
    doc = load(path)
    last = doc.unfinished[-1]
    with pytest.raises(UnfinishedEffect, match=rf"'{last.kind}' \(seq {last.seq}\)"):
        Run.recover(str(path), crashing_agent(path))
    partial = Run.recover(str(path), crashing_agent(path), resume=False)
    assert [e.to_dict() for e in partial.log] == [
        {k: v for k, v in json.loads(doc.raw_entry(i)).items() if k != "type"}
        for i in range(len(doc))
    ]
    assert partial.truncated and doc.header.truncated and not doc.header.paused
    assert (partial.episodes, partial.output) == (doc.episodes, doc.header.output)


def test_recovered_runs_leave_finished_journals(journals: Journals, tmp_path: Path) -> None:
    crashed, paused = tmp_path / "crashed.jsonl", tmp_path / "paused.jsonl"
    shutil.copy(journals.paths["crashed"], crashed)
    shutil.copy(journals.paths["paused"], paused)
    before = load(crashed)
    retried = Run.recover(
        str(crashed), crashing_agent(crashed, crash=False, skip=1), on_unfinished="retry"
    )
    doc = load(crashed)
    assert (doc.unfinished, doc.torn, doc.header.output) == ((), False, retried.output)
    assert [e.kind for e in doc.effects] == [e.kind for e in retried.log]
    assert [e.key for e in doc.effects[: len(before)]] == [e.key for e in before.effects]
    assert doc.result(2) == "charged 42"

    answered = Run.recover(str(paused), paused_journal_agent(paused, lambda _q: "yes", skip=1))
    doc = load(paused)
    tl = build_timeline(doc)
    assert (doc.unfinished, doc.header.paused, doc.header.output) == ((), False, answered.output)
    human = next(i for i, e in enumerate(doc.effects) if e.kind == "human")
    assert doc.result(human) == "yes"
    assert tl.call_of[tl.step_of_effect[human]] == tl.step_of_effect[0]  # ask_human's call
