"""The timeline's per-step columns equal what each step alone says.

The timeline lays its columns out with numpy a whole range of effects at a time
(:mod:`loom_core.views.columns`). The reference here asks one effect at a time, the
way the views ask about a single step: its kind code, clamped depth, agent name,
tokens, result flag, payload size, seq, and its cost through :meth:`RunPricer.cost`
(the full path, never the bulk one). Every column must match, bit for bit, on real
files (the bundled sample, loom-harness's own runs, the real third-party files), on
synthetic runs with sub-agents, on proxy runs and on generated traces with any value
in any field; and a timeline built a chunk at a time, as a live tab builds it, must
equal the one built at once.
"""

from __future__ import annotations

import json
import math
from array import array
from itertools import accumulate
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.synth import synth_trace
from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.loader import load
from loom_core.views import timeline
from loom_core.views.context import ContextIndex
from loom_core.views.run_cost import RunPricer
from loom_core.views.timeline import (
    APPEND_SLICE,
    F_BLOCKED,
    F_DRYRUN,
    F_ERROR,
    K_EPISODE,
    K_MODEL,
    SEQ_LIMIT,
    Timeline,
    TimelineBuilder,
    _AgentNames,
    build_timeline,
    kind_code,
    result_flags,
)
from tests.core.doctor.traces import Trace
from tests.core.formats.real_world import FILES
from tests.core.fuzz.strategies import dump, traces
from tests.core.harness_runs import Recorded

ROOT = Path(__file__).resolve().parents[3]
COLUMNS = (
    "effect_of episode_of kind depth agent tokens_in tokens_out cum_tokens cost offline "
    "cum_cost flags size step_of_effect seqs call_of"
).split()
REAL = sorted(
    p
    for folder in ("claude-code", "inspect", "otlp")
    if (FILES / folder).is_dir()
    for p in (FILES / folder).iterdir()
    if p.is_file()
)


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def _reference(doc: Document, tl: Timeline) -> dict[str, list[Any]]:
    """Each column as one step at a time gives it (``tl``'s step order taken as given)."""
    ctx = tl.context
    assert isinstance(ctx, ContextIndex)
    pricer, names = RunPricer(doc), _AgentNames(doc.is_proxy)
    effects, eps = doc.effects, doc.episodes
    out: dict[str, list[Any]] = {c: [] for c in COLUMNS if c not in ("effect_of", "episode_of")}
    agent_names: list[str] = []
    for s, e in enumerate(tl.effect_of):
        eff = effects[e] if e >= 0 else None
        meta = ctx.meta_of(e) if e >= 0 else None
        code = K_EPISODE if eff is None else kind_code(eff.kind or "")
        out["kind"].append(code)
        out["depth"].append(0 if eff is None else min(max(eff.depth or 0, 0), 0xFFFF))
        agent_names.append("user" if meta is None else (meta.agent or names.label(meta)))
        out["tokens_in"].append(0 if e < 0 else ctx.tokens_in[e])
        out["tokens_out"].append(0 if e < 0 else ctx.tokens_out[e])
        out["flags"].append(result_flags(eff.result) if eff is not None and code == 2 else 0)
        priced = code == K_MODEL or (e >= 0 and e in ctx.billed)
        cost = pricer.cost(e) if priced else 0.0
        out["cost"].append(math.nan if cost is None else cost)
        out["offline"].append(int(pricer.offline(e)) if priced else 0)
        size = len(eps[tl.episode_of[s]]) if eff is None else len(memoryview(eff.result or b""))
        out["size"].append(size)
        if e >= 0:
            out["step_of_effect"].append(s)
    order = list(dict.fromkeys(agent_names))
    assert tl.agents == order
    out["agent"] = [order.index(n) for n in agent_names]
    both = [a + b for a, b in zip(out["tokens_in"], out["tokens_out"], strict=True)]
    out["cum_tokens"] = list(accumulate(both))
    out["cum_cost"] = list(accumulate(0.0 if math.isnan(c) else c for c in out["cost"]))
    seqs = [i if e.seq is None else e.seq for i, e in enumerate(effects)]
    out["seqs"] = [float(min(max(s, -SEQ_LIMIT), SEQ_LIMIT)) for s in seqs]
    call_of = [-1] * len(tl)
    for result_eff, call_eff in ctx.result_pairs.items():
        call_of[out["step_of_effect"][result_eff]] = out["step_of_effect"][call_eff]
    out["call_of"] = call_of
    return out


def check(doc: Document) -> Timeline:
    """The timeline of ``doc`` against the reference, column by column."""
    tl = build_timeline(doc)
    want = _reference(doc, tl)
    for name, values in want.items():
        got = list(getattr(tl, name))
        if name == "flags":
            got = [f & (F_ERROR | F_BLOCKED | F_DRYRUN) for f in got]
        assert len(got) == len(values), name
        bad = [i for i, (a, b) in enumerate(zip(got, values, strict=True)) if not _same(a, b)]
        assert not bad, (doc.path, name, bad[:5], [(got[i], values[i]) for i in bad[:5]])
    assert tl.input_tokens == sum(want["tokens_in"])
    assert tl.output_tokens == sum(want["tokens_out"])
    assert tl.offline_steps == sum(want["offline"])
    assert tl.cost_known == all(
        not math.isnan(c) for c, k in zip(want["cost"], want["kind"], strict=True) if k != 0
    )
    return tl


def check_chunked(doc: Document, cuts: list[int]) -> None:
    """Built a chunk of effects at a time (as a live tab grows), every effect's step
    holds what it holds in the timeline built at once. (Where an episode goes can differ:
    one that no effect starts is placed first only once the log is known to be final.)"""
    whole = build_timeline(doc)
    builder = TimelineBuilder(doc)
    for cut in sorted(cuts):
        builder.extend(upto=cut)
    builder.extend(final=True, unfinished=bool(doc.unfinished))
    tl = builder.tl
    per_step = "kind depth tokens_in tokens_out cost offline flags size".split()

    def facts(t: Timeline, e: int) -> list[Any]:
        s = t.step_of_effect[e]
        caller = t.call_of[s]
        values = [getattr(t, name)[s] for name in per_step]
        values[per_step.index("flags")] &= F_ERROR | F_BLOCKED | F_DRYRUN
        return [*values, t.agents[t.agent[s]], t.seqs[e], -1 if caller < 0 else t.effect_of[caller]]

    for e in range(len(doc)):
        a, b = facts(tl, e), facts(whole, e)
        assert all(_same(x, y) for x, y in zip(a, b, strict=True)), (e, a, b)
    assert (tl.input_tokens, tl.output_tokens) == (whole.input_tokens, whole.output_tokens)


def test_the_bundled_sample() -> None:
    doc = load(ROOT / "resources" / "sample.loom.json")
    check(doc)
    check_chunked(doc, [1, 7, 20])


def test_loom_harness_runs(harness_traces: dict[str, Recorded]) -> None:
    """Sub-agents, compaction, an edit, errors, denials, dry runs: loom-harness's files."""
    for recorded in harness_traces.values():
        doc = load(recorded.path)
        check(doc)
        check_chunked(doc, [len(doc) // 3, len(doc) // 2])


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_real_third_party_files(path: Path) -> None:
    try:
        doc = load(path)
    except LoadError as err:  # a file the reader refuses (e.g. a console-exporter dump)
        pytest.skip(str(err))
    check(doc)
    check_chunked(doc, [len(doc) // 2])


def test_a_synthetic_run_with_sub_agents_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "synth.loom.json"
    path.write_text(json.dumps(synth_trace(1500), indent=2))
    doc = load(path)
    tl = check(doc)
    assert {"lead", "helper"} <= set(tl.agents) and any(f & F_ERROR for f in tl.flags)
    check_chunked(doc, [5, 400, 401, 1000])


def test_a_proxy_run_names_agents_by_their_system_prompt(tmp_path: Path) -> None:
    trace = Trace("one", "two", proxy=True)
    for n in range(3):
        call = trace.call("bash", cmd=f"ls {n}")
        trace.model(f"turn {n}", calls=[call], t_in=100 * n)
        trace.result(call, "ERROR: no" if n == 1 else "ok")
        helper = {"sys_hash": "t" * 12, "sys_role": "reviewer", "model": "gpt-4o"}
        usage = {"usage": {"input_tokens": 9, "output_tokens": 1}}
        trace.effect("model", {"text": "ok", **usage}, 0, helper)
    doc = load(trace.save(tmp_path / "proxy.loom.json"))
    assert doc.is_proxy
    assert check(doc).agents == ["user", "main", "reviewer"]
    check_chunked(doc, [2, 4])


@pytest.mark.parametrize("size", [1, 3, 64])
def test_columns_are_laid_out_a_slice_of_steps_at_a_time(
    size: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big run's columns are laid out a slice of steps at a time (the window's thread
    gets the interpreter lock between slices); every value is the one built at once."""
    monkeypatch.setattr(timeline, "APPEND_SLICE", size)
    laid: list[int] = []
    append = TimelineBuilder._append

    def counted(self: TimelineBuilder, doc: Any, fresh: Any, steps: Any, episodes: Any) -> None:
        laid.append(len(steps.effect_of))
        append(self, doc, fresh, steps, episodes)

    monkeypatch.setattr(TimelineBuilder, "_append", counted)
    path = tmp_path / "synth.loom.json"
    path.write_text(json.dumps(synth_trace(300), indent=2))
    steps = 0
    for doc in (load(ROOT / "resources" / "sample.loom.json"), load(path)):
        steps += len(check(doc))
    assert max(laid) <= size and sum(laid) == steps and len(laid) > 2


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.lists(st.integers(0, 8), max_size=3), st.sampled_from([1, 2, 5, APPEND_SLICE]))
def test_any_values_in_any_field(value: dict[str, Any], cuts: list[int], size: int) -> None:
    """Generated traces (wrong types, huge numbers, proxy runs with a wire) agree too,
    their columns laid out in slices of any size."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(timeline, "APPEND_SLICE", size):
        path = Path(tmp) / "any.loom.json"
        path.write_bytes(dump("trace", value))
        try:
            doc = load(path)
        except LoadError:
            return
        check(doc)
        check_chunked(doc, cuts)


def test_array_types_are_kept() -> None:
    """Views slice, ``count`` and ``index`` these columns: they stay ``array.array``s."""
    tl = build_timeline(load(ROOT / "resources" / "sample.loom.json"))
    for name in COLUMNS:
        assert isinstance(getattr(tl, name), array), name
