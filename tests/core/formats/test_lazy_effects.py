"""A big trace's effects are decoded when asked for, and read exactly as a plain load's.

Why: the progressive load builds the timeline from each run of entries as it decodes it
and keeps no struct per effect (they were 0.39× the file in memory); every view, the CLI,
fork and export read ``doc.effects`` as before, so any index, slice or walk of the lazy
sequence must give what the list gave, from any thread, whichever runs are kept.
"""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import msgspec
import numpy as np
import pytest

from benchmarks.synth import synth_trace
from loom_core.formats import progressive
from loom_core.formats.canonical import checksum
from loom_core.formats.lazy_effects import BLOCK, KEEP_BLOCKS, LazyEffects
from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from tests.core.harness_runs import Recorded

COLUMNS = ("effect_of", "episode_of", "kind", "depth", "agent", "tokens_in", "tokens_out")
COLUMNS += ("cum_tokens", "cost", "offline", "cum_cost", "flags", "call_of", "size", "seqs")


@pytest.fixture
def small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's big-file path for small files, in runs of a few entries, the
    timeline built a few runs at a time."""
    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    monkeypatch.setattr(progressive, "CHUNK_BYTES", 3000)


def _plain(effects: object) -> list[object]:
    return [msgspec.structs.asdict(e) for e in effects]  # type: ignore[attr-defined]


def _synth(tmp_path: Path, n: int = 400) -> Path:
    path = tmp_path / "synth.loom.json"
    path.write_text(json.dumps(synth_trace(n), indent=2))
    return path


def _lazy(path: Path) -> LazyEffects:
    effects = progressive.load_progressive(str(path)).doc.effects
    assert isinstance(effects, LazyEffects)
    return effects


def test_every_index_slice_and_walk_is_the_plain_loads(tmp_path: Path, small_runs: None) -> None:
    path = _synth(tmp_path)
    lazy, plain = _lazy(path), load(path).effects
    n = len(plain)
    assert len(lazy) == n and len(lazy.at.ranges) > 20  # many runs
    assert _plain(lazy) == _plain(plain)  # the walk
    assert lazy == plain and lazy == list(plain) and lazy != plain[:-1]
    order = list(range(-n, n))
    random.Random(7).shuffle(order)
    assert [_plain([lazy[i]]) for i in order] == [_plain([plain[i]]) for i in order]
    cuts = [(0, n), (3, 4), (5, 5), (n - 1, n + 5), (-30, -2), (17, 260), (None, 9)]
    for a, b in cuts:
        assert _plain(lazy[a:b]) == _plain(plain[a:b]), (a, b)
    assert _plain(lazy[::7]) == _plain(plain[::7])
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            lazy[bad]


def test_only_a_few_runs_stay_decoded(tmp_path: Path, small_runs: None) -> None:
    """After the load and after a walk over every effect, no more than KEEP_BLOCKS blocks
    of structs are held: what the memory goal rests on."""
    lazy = _lazy(_synth(tmp_path, 12_000))
    held = lambda: sum(map(len, lazy._kept.values())) + sum(map(len, lazy._fresh.values()))  # noqa: E731
    assert held() <= KEEP_BLOCKS * BLOCK < len(lazy)
    for i in range(0, len(lazy), 3):
        lazy[i]
    assert sum(1 for _ in lazy) == len(lazy)
    assert held() <= KEEP_BLOCKS * BLOCK


def test_readers_on_several_threads_see_the_same_effects(tmp_path: Path, small_runs: None) -> None:
    path = _synth(tmp_path)
    lazy, plain = _lazy(path), load(path).effects
    want = [e.seq for e in plain]
    wrong: list[tuple[int, object]] = []

    def read(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(3000):
            i = rng.randrange(len(want))
            if lazy[i].seq != want[i]:
                wrong.append((i, lazy[i].seq))

    threads = [threading.Thread(target=read, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads) and wrong == []


def _same_timeline(path: Path) -> None:
    loaded = progressive.load_progressive(str(path))
    assert isinstance(loaded.doc.effects, LazyEffects), path.name
    whole = build_timeline(load(path))
    for column in COLUMNS:
        got, want = np.asarray(getattr(loaded.timeline, column)), np.asarray(getattr(whole, column))
        assert np.array_equal(got, want, equal_nan=True), (path.name, column)
    assert loaded.timeline.agents == whole.agents
    for tl in (loaded.timeline, whole):  # what the filter reads instead of the effects
        assert [tl.kind_names[k] for k in tl.effect_kind] == [
            e.kind or "" for e in load(path).effects
        ]
    payloads = [
        [None if r is None else bytes(r) for r in t.results] for t in (loaded.timeline, whole)
    ]
    assert payloads[0] == payloads[1] and len(payloads[0]) == len(load(path).effects)
    assert loaded.timeline.shield_at == whole.shield_at
    assert (loaded.timeline.input_tokens, loaded.timeline.output_tokens) == (
        whole.input_tokens,
        whole.output_tokens,
    )


def test_the_timeline_built_a_few_runs_at_a_time_is_the_whole_ones(
    tmp_path: Path, small_runs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Episodes between runs, a tool result in the run after its call, the last episode
    placed only when the log is whole: built as the runs come, as in one pass."""
    monkeypatch.setattr(progressive, "BUILD_RUNS", 1)
    _same_timeline(_synth(tmp_path))


def test_loom_harness_runs_built_as_the_runs_come(
    harness_traces: dict[str, Recorded], small_runs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sub-agents, compaction, shield decisions, non-ASCII text: loom-harness's files."""
    monkeypatch.setattr(progressive, "CHUNK_BYTES", 500)
    monkeypatch.setattr(progressive, "BUILD_RUNS", 1)
    for recorded in harness_traces.values():
        _same_timeline(recorded.path)


def test_a_separator_inside_an_entry_is_no_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JSON allows any whitespace between tokens: a hand-written entry can hold the
    layout's separator itself (a nested list of objects at indent 4). The load decodes
    such a run as one list; reading it again must not cut that entry in two."""
    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    trace = synth_trace(40)
    real = [{"x": 1}, {"y": 2}]
    trace["log"][7]["result"] = real
    trace["checksum"] = checksum(trace)
    trace["log"][7]["result"] = "PLACEHOLDER"
    text = json.dumps(trace, indent=2).replace('"PLACEHOLDER"', '[{"x": 1\n    },\n    {"y": 2}]')
    path = tmp_path / "odd.loom.json"
    path.write_text(text)
    lazy = _lazy(path)  # one run: the whole log decoded as a list
    plain = load(path).effects
    lazy._kept.clear()  # read it again from the source
    assert _plain(lazy) == _plain(plain) and lazy[7].result is not None
    assert [lazy[i].seq for i in range(len(plain))] == [e.seq for e in plain]
