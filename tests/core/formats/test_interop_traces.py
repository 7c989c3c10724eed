"""loom_core against loom-harness, on traces loom-harness itself recorded.

Why: the desktop app is only useful if it shows exactly what the reference
implementation recorded and writes files the reference accepts silently. Each
scenario of :mod:`harness_runs` is loaded with loom_core and every fact is
checked against loom-harness's own reading of the same file (``Run.load``), its
in-memory run, and its key hashing (the oracle for context frames).
"""

from __future__ import annotations

import functools
import json
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from loom import Run

from loom_core.formats.canonical import effect_key
from loom_core.formats.loader import load
from loom_core.formats.save import save_document
from loom_core.formats.trace import checksum_state
from loom_core.views.frames import Frame, frame_at, neutral_messages
from loom_core.views.summary import summarize
from loom_core.views.timeline import (
    F_BLOCKED,
    F_DRYRUN,
    F_ERROR,
    F_UNFINISHED,
    K_EPISODE,
    K_MODEL,
    K_TOOL,
    build_timeline,
)
from tests.core.clis import loom
from tests.core.harness_runs import Recorded

NAMES = (
    "tools",
    "subagent",
    "policy",
    "dry_run",
    "budget",
    "max_steps",
    "unicode",
    "big",
    "paused",
    "resumed",
    "paused_child",
    "resumed_child",
    "compaction",
    "fork",
)


@pytest.fixture(params=NAMES)
def rec(request: pytest.FixtureRequest, harness_traces: dict[str, Recorded]) -> Recorded:
    """One recorded scenario (parametrised over all of them)."""
    return harness_traces[request.param]


def harness_load(path: Path) -> Run:
    """loom-harness's reading of ``path``; any warning (version, checksum) fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return Run.load(str(path))


def test_header_facts_match_the_harness(rec: Recorded) -> None:
    doc, run = load(rec.path), harness_load(rec.path)
    assert (doc.format, doc.version, doc.warnings) == ("trace", 2, ())
    assert checksum_state(doc) == "valid"
    h = doc.header
    assert (h.model, h.system) == (rec.run.agent.model, rec.run.agent.system)
    assert (h.prompt, doc.episodes, h.output) == (run.prompt, run.episodes, run.output)
    assert (h.paused, h.truncated, h.stop_reason) == (run.paused, run.truncated, run.stop_reason)
    assert (h.pending, h.pending_depth) == (run.pending, run.pending_depth)
    assert run.output == rec.run.output and run.episodes == rec.run.episodes


def test_effects_match_the_harness_log(rec: Recorded) -> None:
    doc, run = load(rec.path), harness_load(rec.path)
    on_disk = json.loads(rec.path.read_text())["log"]
    assert len(doc.effects) == len(run.log) == len(rec.run.log)
    for i, (eff, entry) in enumerate(zip(doc.effects, run.log, strict=True)):
        assert (eff.seq, eff.kind, eff.key, eff.depth) == (
            entry.seq,
            entry.kind,
            entry.key,
            entry.depth,
        )
        assert doc.result(i) == entry.result
        meta = doc.meta(i)
        assert (meta.agent, meta.sys_hash, meta.sys_head) == (
            entry.meta.get("agent"),
            entry.meta.get("sys_hash"),
            entry.meta.get("sys_head"),
        )
        # the raw view shows the entry as it is on disk, not a re-encoded struct
        assert json.loads(doc.raw_entry(i)) == on_disk[i]


def test_tokens_match_harness_cost(rec: Recorded) -> None:
    doc, run = load(rec.path), harness_load(rec.path)
    tl = build_timeline(doc)
    cost = run.cost()
    assert (tl.input_tokens, tl.output_tokens) == (cost["input_tokens"], cost["output_tokens"])
    assert tl.cum_tokens[-1] == cost["total_tokens"]
    facts = summarize(doc, checksum_state(doc))
    assert (facts["input_tokens"], facts["output_tokens"]) == (tl.input_tokens, tl.output_tokens)
    assert facts["kinds"] == [e.kind for e in run.log]
    assert facts["depths"] == sorted({e.depth for e in run.log})
    assert facts["checksum"] == "valid" and facts["episodes"] == run.episodes
    for e, entry in enumerate(run.log):
        usage = entry.result.get("usage", {}) if entry.kind == "model" else {}
        s = tl.step_of_effect[e]
        assert (tl.tokens_in[s], tl.tokens_out[s]) == (
            usage.get("input_tokens", 0),
            usage.get("output_tokens", 0),
        )
    if doc.header.model == "scripted":  # an offline provider: free, and said so
        assert tl.total_cost == 0.0 and facts["cost_usd"] == 0.0
        assert all(tl.offline[s] for s in range(len(tl)) if tl.kind[s] == K_MODEL)
    else:
        assert tl.total_cost is not None and tl.total_cost > 0


def test_steps_follow_the_harness_timeline(rec: Recorded) -> None:
    doc, run = load(rec.path), harness_load(rec.path)
    tl = build_timeline(doc)
    rows = run.timeline()
    ours = [
        (doc.effects[e].seq, tl.depth[s], tl.kind_name(s))
        for s, e in enumerate(tl.effect_of)
        if e >= 0
    ]
    assert ours == [(r["step"], r["depth"], r["kind"]) for r in rows]
    episode_steps = [s for s in range(len(tl)) if tl.kind[s] == K_EPISODE]
    assert [doc.episodes[tl.episode_of[s]] for s in episode_steps] == run.episodes
    assert (
        sum(1 for s in range(len(tl)) if tl.kind[s] == K_MODEL and tl.depth[s] == 0)
        == run.num_turns
    )
    for s, e in enumerate(tl.effect_of):  # agent labels are the recorded meta.agent (§13.15)
        agent = run.log[e].meta.get("agent") if e >= 0 else None
        if agent:
            assert tl.agents[tl.agent[s]] == agent
        assert not tl.flags[s] & F_UNFINISHED  # only journals end inside an effect


def _harness_owners(doc: Any) -> dict[tuple[str, str, int], int]:
    """(kind, key, depth) of every tool/human effect a model call asked for -> that call.

    This is loom-harness's own definition of the pairing: a tool effect's key is
    the hash of ``{"id", "input"}`` of its call (``{"question"}`` for ``ask_human``).
    """
    owners: dict[tuple[str, str, int], int] = {}
    for m, eff in enumerate(doc.effects):
        if eff.kind != "model":
            continue
        for c in doc.result(m)["tool_calls"]:
            key = effect_key(f"tool:{c['name']}", {"id": c["id"], "input": c["input"]})
            owners[(f"tool:{c['name']}", key, eff.depth)] = m
            if c["name"] == "ask_human":
                human = effect_key("human", {"question": c["input"]["question"]})
                owners[("human", human, eff.depth)] = owners[("human", "resumed", eff.depth)] = m
    return owners


def test_tool_results_pair_with_the_calls_that_asked_for_them(rec: Recorded) -> None:
    doc = load(rec.path)
    tl = build_timeline(doc)
    owners = _harness_owners(doc)
    paired = 0
    for e, eff in enumerate(doc.effects):
        owner = owners.get((eff.kind, eff.key, eff.depth))
        if eff.kind.startswith("tool:"):
            assert owner is not None, f"harness key of effect {e} matches no call"
        if owner is None:
            continue
        r, c = tl.step_of_effect[e], tl.step_of_effect[owner]
        assert tl.call_of[r] == c, f"effect {e} should pair with model effect {owner}"
        paired += 1
    assert paired == sum(c >= 0 for c in tl.call_of)  # nothing the harness would not pair
    results: dict[int, list[int]] = {}  # which of its call's results each is (parallel calls)
    for r, c in enumerate(tl.call_of):
        if c >= 0:
            results.setdefault(c, []).append(r)
    for found in results.values():
        assert [tl.call_position(r) for r in found] == list(range(len(found)))
    assert tl.call_position(0) == -1  # the prompt answers no call


def test_error_blocked_and_dry_run_flags(rec: Recorded) -> None:
    doc = load(rec.path)
    tl = build_timeline(doc)
    counts = {F_ERROR: 0, F_BLOCKED: 0, F_DRYRUN: 0}
    for s, e in enumerate(tl.effect_of):
        value = doc.result(e) if e >= 0 else None
        text = value if isinstance(value, str) and tl.kind[s] == K_TOOL else ""
        for flag, prefix in ((F_ERROR, "ERROR:"), (F_BLOCKED, "BLOCKED:"), (F_DRYRUN, "DRY-RUN:")):
            assert bool(tl.flags[s] & flag) == text.startswith(prefix), (s, text)
            counts[flag] += text.startswith(prefix)
    expected = {"tools": (3, 0, 0), "policy": (0, 2, 0), "dry_run": (0, 0, 1)}
    assert (counts[F_ERROR], counts[F_BLOCKED], counts[F_DRYRUN]) == expected.get(
        rec.name, (0, 0, 0)
    )


@functools.cache
def _frames(path: Path) -> tuple[Any, dict[int, Frame], dict[int, list[dict[str, Any]]]]:
    """Document, frames and neutral message lists of every model effect (built once per file)."""
    doc = load(path)
    context = build_timeline(doc).context
    assert context is not None
    frames = {e: f for e in range(len(doc.effects)) if (f := frame_at(context, e)) is not None}
    return doc, frames, {e: neutral_messages(f) for e, f in frames.items()}


def test_context_frames_reproduce_the_harness_model_keys(rec: Recorded) -> None:
    """A frame is right iff hashing it the harness's way gives the recorded key (§3.2)."""
    doc, frames, neutral = _frames(rec.path)
    assert len(frames) == sum(1 for e in doc.effects if e.kind == "model")
    for e, frame in frames.items():
        agent = rec.agents[frame.agent]
        system, complete = frame.system()
        assert complete and system == agent.system
        payload = {
            "system": agent.system,
            "messages": neutral[e],
            "tools": [t.schema() for t in agent.tools.values()],
        }
        assert effect_key("model", payload) == doc.effects[e].key, f"frame of effect {e}"


def test_frame_deltas_extend_the_previous_call(rec: Recorded) -> None:
    """``new_from`` splits a frame into what the agent's previous call saw and what is new."""
    doc, frames, neutral = _frames(rec.path)
    for e, frame in frames.items():
        if frame.prev_effect is None:
            assert frame.new_from == 0
            continue
        prev = frames[frame.prev_effect]
        between = {doc.effects[k].kind for k in range(frame.prev_effect + 1, e)}
        assert prev.agent == frame.agent
        assert frame.rewritten == bool(between & {"compact", "edit"})
        if frame.rewritten:  # compaction/edit replaced the list: everything counts as new
            assert frame.new_from == 0
            continue
        assert frame.new_from == len(prev)
        assert neutral[e][: frame.new_from] == neutral[frame.prev_effect]
        assert frame.message(frame.new_from).effect == frame.prev_effect  # its own last answer


def test_saved_copy_is_byte_identical_and_accepted(rec: Recorded, tmp_path: Path) -> None:
    out = tmp_path / "copy.loom.json"
    save_document(load(rec.path), out)
    assert out.read_bytes() == rec.path.read_bytes()
    harness_load(out)
    assert loom("trace", "verify", out).returncode == 0
    theirs = loom("trace", "validate", rec.path).returncode
    assert loom("trace", "validate", out).returncode == theirs


def _with_unknown_fields(src: Path, dst: Path) -> dict[str, Any]:
    """A copy of ``src`` with vendor fields everywhere, re-stamped by loom-harness itself."""
    from loom.trace import trace_checksum

    data = json.loads(src.read_text())
    data["x_vendor"] = {"nested": [1, 2.0, "ü ✓", None, True], "f": 3.0, "tiny": 1e-07}
    data["log"][0].setdefault("meta", {})["x_note"] = "time has a note 😀"
    data["log"][1]["meta"]["x_cache"] = {"hit": False, "ratio": 0.25}
    data["log"][2]["x_extra"] = 1e16
    data.pop("checksum")
    data["checksum"] = trace_checksum(data)
    dst.write_text(json.dumps(data, indent=2))
    return data


def test_unknown_fields_survive_load_and_save(
    harness_traces: dict[str, Recorded], tmp_path: Path
) -> None:
    src = tmp_path / "vendor.loom.json"
    data = _with_unknown_fields(harness_traces["tools"].path, src)
    doc = load(src)
    assert checksum_state(doc) == "valid"
    assert json.loads(doc.raw_entry(2))["x_extra"] == 1e16
    out = tmp_path / "saved.loom.json"
    save_document(doc, out)
    text = out.read_text()
    assert json.loads(text) == data and out.read_bytes() == src.read_bytes()
    assert '"f": 3.0' in text and '"tiny": 1e-07' in text and '"x_extra": 1e+16' in text
    harness_load(out)
    assert loom("trace", "verify", out).returncode == 0


def test_tampered_trace_loads_with_a_mismatch(
    harness_traces: dict[str, Recorded], tmp_path: Path
) -> None:
    src = tmp_path / "tampered.loom.json"
    shutil.copy(harness_traces["tools"].path, src)
    data = json.loads(src.read_text())
    data["log"][2]["result"] = "contents edited by hand"
    src.write_text(json.dumps(data, indent=2))
    doc = load(src)
    assert checksum_state(doc) == "mismatch"
    assert doc.result(2) == "contents edited by hand"
    with pytest.warns(UserWarning, match="checksum mismatch"):
        Run.load(str(src))
    assert loom("trace", "verify", src).returncode == 1
    out = tmp_path / "restamped.loom.json"  # saving is a deliberate re-stamp, like `loom migrate`
    save_document(doc, out)
    assert checksum_state(load(out)) == "valid"
    harness_load(out)


def test_five_thousand_effects_open_fast(harness_traces: dict[str, Recorded]) -> None:
    """Opening the 5,001-effect run (load, timeline, checksum, summary) takes milliseconds;
    the bound is loose so a busy CI machine does not flake, yet catches a quadratic pass."""
    path = harness_traces["big"].path
    start = time.perf_counter()
    doc = load(path)
    tl = build_timeline(doc)
    facts = summarize(doc, checksum_state(doc))
    elapsed = time.perf_counter() - start
    assert (len(doc), len(tl), facts["checksum"]) == (5001, 5002, "valid")
    assert sum(c >= 0 for c in tl.call_of) == 4950 and elapsed < 2.0, elapsed


def test_one_line_and_version_1_traces(harness_traces: dict[str, Recorded], tmp_path: Path) -> None:
    """Other writers: a compact one-line file loads the same; a version-1 file warns like loom."""
    data = json.loads(harness_traces["subagent"].path.read_text())
    compact = tmp_path / "compact.loom.json"
    compact.write_text(json.dumps(data))
    assert [e.key for e in load(compact).effects] == [e["key"] for e in data["log"]]
    assert checksum_state(load(compact)) == "valid"
    del data["version"], data["checksum"]
    old = tmp_path / "v1.loom.json"
    old.write_text(json.dumps(data, indent=2))
    doc = load(old)
    assert doc.version == 1 and len(doc.warnings) == 1 and "version 1" in doc.warnings[0]
    assert checksum_state(doc) == "absent"
    with pytest.warns(UserWarning, match="trace version 1"):
        Run.load(str(old))
