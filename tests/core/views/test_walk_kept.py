"""A finished run's timeline leaves its context walk with the document, and the fork's
walk is that one: what a fork reads from a big run's tab is not walked a second time,
and it is the same as a walk of its own, on every kind of run; a run that grew since is
walked again."""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.synth import synth_trace
from loom_core.errors import LoadError
from loom_core.formats import progressive
from loom_core.formats.document import Document
from loom_core.formats.gc_pause import gc_paused
from loom_core.formats.loader import load, load_bytes
from loom_core.formats.progressive import load_progressive
from loom_core.views.context import ContextIndex, build_context, context_index
from loom_core.views.timeline import build_timeline
from tests.core.fuzz.strategies import dump, traces
from tests.core.harness_runs import Recorded

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "resources" / "sample.loom.json"
_ARRAYS = ("tokens_in", "tokens_out", "frame_ctx", "frame_len", "prev_model", "caller")


def _facts(index: ContextIndex) -> dict[str, Any]:
    """Everything a fork or a view reads from a walk, as plain values."""
    facts: dict[str, Any] = {name: list(getattr(index, name)) for name in _ARRAYS}
    facts["plain_usage"] = list(index.plain_usage)
    facts["episodes"] = dict(index.episode_before)
    facts["billed"] = set(index.billed)
    facts["contexts"] = [(c.agent, c.depth, list(c.items)) for c in index.contexts]
    facts["edits"] = {i: (list(a.items), list(b.items)) for i, (a, b) in index.edits.items()}
    return facts


def _kept_and_equal(doc: Document, walked: ContextIndex) -> None:
    assert context_index(doc) is walked  # nothing walked again
    assert _facts(walked) == _facts(build_context(doc))


def test_every_harness_run_and_the_sample_keep_their_walk(
    harness_traces: dict[str, Recorded],
) -> None:
    paths = [SAMPLE, *(r.path for r in harness_traces.values())]
    for path in paths:
        doc = load(path)
        _kept_and_equal(doc, build_timeline(doc).context)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_any_trace_keeps_a_walk_equal_to_its_own(value: dict[str, Any]) -> None:
    """Generated harness and proxy traces: compactions, edits, memories, human answers."""
    try:
        doc = load_bytes(dump("trace", value), "any.loom.json")
    except LoadError:
        return
    _kept_and_equal(doc, build_timeline(doc).context)


def test_a_big_runs_load_keeps_its_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    monkeypatch.setattr(progressive, "CHUNK_BYTES", 2_000)  # many runs of entries
    path = tmp_path / "big.loom.json"
    path.write_text(json.dumps(synth_trace(300), indent=2))
    loaded = load_progressive(str(path))
    assert len(loaded.doc.effects) == 300 and loaded.doc.entry_index is not None  # in runs
    _kept_and_equal(loaded.doc, loaded.timeline.context)


def test_a_run_that_grew_is_walked_again() -> None:
    doc = load(SAMPLE)
    first = build_timeline(doc).context
    grown = Document(path=doc.path, format=doc.format, header=doc.header, effects=list(doc.effects))
    assert context_index(grown) is not first
    kept = context_index(grown)
    grown.effects.append(doc.effects[-1])  # as a live tail appends
    again = context_index(grown)
    assert again is not kept and len(again.frame_ctx) == len(doc.effects) + 1


def test_a_loaded_run_is_freed_without_the_collector() -> None:
    """The timeline's walk is offered to the fork, not held by the document: no cycle,
    so a closed run goes when its last reference does (the window freezes the
    collector's generations while runs are open)."""
    doc = load(SAMPLE)
    tl = build_timeline(doc)
    gone = weakref.ref(doc)
    with gc_paused():  # (restores the collector's state: a window test's worker has it off)
        del doc, tl
        assert gone() is None
