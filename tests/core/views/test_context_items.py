"""An agent's context items are stored compactly and read back as the walk's tuples.

The walk (:mod:`loom_core.views.context`) keeps each agent's items in an
:class:`~loom_core.views.items.ItemList`: a code per item instead of a tuple. The
reference here is a plain list of the tuples the walk appended before (the same walk,
its item list swapped for one that appends the literal tuples): every agent's items,
every frame's messages and every edit's lists must read the same, on the bundled
sample, fork branches with edits, real third-party files, a synthetic run with
sub-agents and errors, and generated traces with compactions, edits, memories, clock
lines and human answers in any order. And the items take a few bytes each, not a
tuple's hundred and more.
"""

from __future__ import annotations

import json
import shutil
import tracemalloc
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.synth import synth_trace
from loom_core.errors import LoadError
from loom_core.fork.edits import Edit, MessageOp
from loom_core.fork.rerun import run_fork
from loom_core.formats.document import Document
from loom_core.formats.loader import load, load_bytes
from loom_core.providers.scripted import ScriptedProvider
from loom_core.views import context
from loom_core.views.context import ContextIndex, build_context
from loom_core.views.frames import frame_at
from loom_core.views.items import Item
from loom_core.views.pairs import ResultPairs
from tests.core.formats.real_world import FILES
from tests.core.fuzz.strategies import dump, traces

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "resources" / "sample.loom.json"
REAL = sorted(
    p
    for folder in ("claude-code", "inspect", "otlp")
    if (FILES / folder).is_dir()
    for p in (FILES / folder).iterdir()
    if p.is_file()
)


class _Tuples(list[Item]):
    """The item list as the walk kept it before: the literal tuple of each item."""

    def __init__(self, effects: Sequence[Any], items: Sequence[Item] = ()) -> None:
        super().__init__(items)
        self.effects = effects

    def add_assistant(self, effect: int) -> None:
        self.append(("assistant", effect, "", ""))

    def add_tool(self, effect: int, call_id: str, human: bool = False) -> None:
        name = "ask_human" if human else (self.effects[effect].kind or "")[5:]
        self.append(("tool", effect, call_id, name))

    def add_memory(self, effect: int) -> None:
        self.append(("memory", effect, "", "user"))


def _reference(doc: Document) -> ContextIndex:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(context, "ItemList", _Tuples)
        return build_context(doc)


def _facts(index: ContextIndex) -> Iterator[Any]:
    """Everything a view reads of the contexts: items, frames (messages), edits."""
    for ctx in index.contexts:
        yield ctx.agent, ctx.depth, len(ctx.items), list(ctx.items), ctx.items[-3:]
    for effect, (old, new) in sorted(index.edits.items()):
        yield effect, list(old.items), list(new.items)
    for effect in range(len(index.doc.effects)):
        frame = frame_at(index, effect)
        if frame is not None:
            yield effect, frame.n, frame.new_from, frame.rewritten, frame.messages()


def check(doc: Document) -> ContextIndex:
    index = build_context(doc)
    assert list(_facts(index)) == list(_facts(_reference(doc)))
    return index


def test_the_bundled_sample() -> None:
    index = check(load(SAMPLE))
    assert any(len(ctx.items) for ctx in index.contexts)


def test_fork_branches_with_edits(tmp_path: Path) -> None:
    parent = Path(shutil.copy(SAMPLE, tmp_path / "sample.loom.json"))
    edits = (
        Edit(inject="Mind the budget."),
        Edit(messages=[MessageOp(op="delete", index=1)]),
    )
    for n, edit in enumerate(edits):
        out = tmp_path / f"branch{n}.loom.json"
        run_fork(load(parent), parent, 14, edit, ScriptedProvider(), out=out)
        assert check(load(out)).edits


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_real_third_party_files(path: Path) -> None:
    try:
        doc = load(path)
    except LoadError:
        pytest.skip("not a run this reader opens alone")
    check(doc)


def test_a_synthetic_run_with_sub_agents_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "synth.loom.json"
    path.write_text(json.dumps(synth_trace(1500), indent=2))
    index = check(load(path))
    assert {ctx.depth for ctx in index.contexts} == {0, 1}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_any_trace(value: dict[str, Any]) -> None:
    try:
        doc = load_bytes(dump("trace", value), "any.loom.json")
    except LoadError:
        return
    check(doc)


def _held(doc: Document, reference: bool) -> int:
    """Bytes the context index holds once built (its items, arrays, pairs and metas)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index = _reference(doc) if reference else build_context(doc)
        held = tracemalloc.get_traced_memory()[0] - before
        assert index.contexts  # (alive while measured)
        return held
    finally:
        tracemalloc.stop()


def test_an_item_takes_a_few_bytes(tmp_path: Path) -> None:
    """As tuples (each with its int and tool name string) the items were about 70% of
    the index; compact, the whole index is well under two thirds of that."""
    path = tmp_path / "synth.loom.json"
    path.write_text(json.dumps(synth_trace(4000), indent=2))
    doc = load(path)
    assert _held(doc, reference=False) < 0.65 * _held(doc, reference=True)


def test_result_pairs_read_as_a_mapping_in_effect_order() -> None:
    """The walk keeps pairs as a per-effect array; views read {result: model call}."""
    pairs = ResultPairs(array("i", [-1, 0, 0, -1, 3, 7]))
    assert dict(pairs) == {1: 0, 2: 0, 4: 3, 5: 7} and list(pairs) == [1, 2, 4, 5]
    assert len(pairs) == 4 and pairs.get(3) is None and pairs.get(99) is None
    assert pairs.get(-1) is None and pairs[4] == 3 and 5 in pairs and 0 not in pairs
