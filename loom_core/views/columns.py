"""A timeline's per-step columns for a range of effects, computed with numpy.

Why: a million-effect run has a million steps, and building each step's kind, depth,
agent, tokens, flags, size and cost one Python step at a time took most of a big
run's load (3.8 of 9 s of a 100,000-effect profile). Here each column is read out of
the effects with C-level iteration (``map`` over an ``attrgetter``), mapped through
a small table of its distinct values (kinds, agents, models) and laid out per step
with one numpy gather. Only what is rare stays a Python step per element: the first
bytes of a tool result (its ERROR/BLOCKED/DRY-RUN flag), the size of an episode,
and a model call whose price needs more than its input and output counts.

Every value is the one the per-effect code computed (a property test compares them
on real files): the same integer arithmetic, the same float operations in the same
order.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

_kind, _depth, _result, _seq = (attrgetter(n) for n in ("kind", "depth", "result", "seq"))
_agent, _model = attrgetter("agent"), attrgetter("model")
_agent_parts = attrgetter("agent", "sys_hash", "sys_role")


def put(target: array[Any], values: npt.NDArray[Any]) -> None:
    """Append ``values`` to an ``array.array`` in one copy (its typecode names the
    numpy type: ``i``, ``B``, ``H``, ``q`` and ``d`` mean the same C types in both)."""
    target.frombytes(np.ascontiguousarray(values, dtype=np.dtype(target.typecode)).tobytes())


def ints(values: Sequence[int] | array[int]) -> Ints:
    """A per-effect ``array.array`` (or list) of integers as an int64 numpy array (a copy:
    the array may grow later, which a numpy view of it would forbid)."""
    return np.array(values, dtype=np.int64)


@dataclass
class StepMap:
    """Where each new step's values come from: ``at[s]`` indexes the range's effect
    columns, and index ``n`` (one past the last effect) is the sentinel an episode reads."""

    effect_of: Ints  # step -> effect (absolute) or -1
    at: Ints  # step -> position in the range's columns, n for an episode
    start: int
    n: int  # effects in the range

    @classmethod
    def of(cls, effect_of: Ints, start: int, n: int) -> StepMap:
        return cls(effect_of, np.where(effect_of < 0, n, effect_of - start), start, n)

    def spread(self, per_effect: npt.NDArray[Any], episode: Any = 0) -> npt.NDArray[Any]:
        """A per-effect column laid out per step (episodes get ``episode``)."""
        return np.concatenate((per_effect, np.array([episode], dtype=per_effect.dtype)))[self.at]


def kinds(fresh: Sequence[Any]) -> list[Any]:
    """Each effect's kind as recorded (``None`` when missing)."""
    return list(map(_kind, fresh))


def depths(fresh: Sequence[Any]) -> Ints:
    """Each effect's depth clamped to 0..65535 (a missing depth is 0)."""
    values = [d or 0 for d in map(_depth, fresh)]
    try:
        column = np.array(values, dtype=np.int64)
    except OverflowError:  # a hand-edited depth past 64 bits
        column = np.array([min(max(d, 0), 0xFFFF) for d in values], dtype=np.int64)
    return np.minimum(np.maximum(column, 0), 0xFFFF)  # (np.clip costs more on a few values)


def seqs(fresh: Sequence[Any], start: int) -> list[Any]:
    """Each effect's seq, its position when null (the caller clamps what a float cannot hold)."""
    values = list(map(_seq, fresh))
    if None in values:
        values = [start + i if s is None else s for i, s in enumerate(values)]
    return values


def agent_ids(
    metas: Sequence[Any], steps: StepMap, label: Callable[[Any], str], ids: dict[str, int]
) -> Ints:
    """Each step's agent id: ``ids`` numbers agent names in the order steps first show them.

    An agent is named by ``meta.agent``, else ``label`` (proxy agents by system hash).
    ``label`` keeps state (the first hash it sees is "main"), so it is asked once per
    distinct (agent, hash, role) in the order they first occur: the calls it would get
    per effect, less the repeats, which change nothing.
    """
    parts: list[Any] = list(map(_agent, metas))
    distinct = dict.fromkeys(parts)
    if any(not a for a in distinct):  # some agent is named by its system prompt's hash
        parts = list(map(_agent_parts, metas))
        distinct = dict.fromkeys(parts)
        names = [a if a else label(_Meta(a, h, r)) for a, h, r in distinct]
    else:
        names = list(distinct)
    position = {p: i for i, p in enumerate(distinct)}
    per_effect = np.fromiter(map(position.__getitem__, parts), dtype=np.int64, count=len(parts))
    user = len(names)
    per_step = steps.spread(per_effect, user)
    table = np.zeros(user + 1, dtype=np.int64)
    for i in _by_first_step(per_step, user + 1):
        table[i] = ids.setdefault("user" if i == user else names[i], len(ids))
    if len(ids) > 0x10000:
        raise OverflowError("more agents than a step's agent column holds")
    agents: Ints = table[per_step]
    return agents


def _by_first_step(values: Ints, distinct: int) -> list[int]:
    """The values of ``values`` (all below ``distinct``) in the order they first occur.

    A few agents are the usual case: one vectorised search per value is cheaper than
    sorting a million steps (``np.unique``), which many agents still take.
    """
    if distinct > 32:
        found, first = np.unique(values, return_index=True)
        return [int(v) for v in found[np.argsort(first)]]
    firsts = []
    for v in range(distinct):
        hits = values == v
        if hits.any():
            firsts.append((int(hits.argmax()), v))
    return [v for _first, v in sorted(firsts)]


@dataclass(frozen=True)
class _Meta:
    """The members of an effect's meta that name its agent."""

    agent: Any
    sys_hash: Any
    sys_role: Any


def sizes(
    results: Sequence[Any], steps: StepMap, episode_of: Ints, episodes: Sequence[str]
) -> Ints:
    """Bytes of each step's payload: its raw result, or its episode's text."""
    per_effect = np.fromiter(
        (0 if r is None else len(r) for r in results), dtype=np.int64, count=len(results)
    )
    out = steps.spread(per_effect)
    for s in np.flatnonzero(steps.effect_of < 0).tolist():
        out[s] = len(episodes[episode_of[s]])
    return out


def flags(results: Sequence[Any], codes: Ints, tool: int, flag_of: Callable[[Any], int]) -> Ints:
    """ERROR/BLOCKED/DRY-RUN flags of the tool results among the effects."""
    out = np.zeros(len(results), dtype=np.int64)
    for i in np.flatnonzero(codes == tool).tolist():
        out[i] = flag_of(results[i])
    return out


def running(values: npt.NDArray[Any], last: Any) -> npt.NDArray[Any]:
    """Running totals from ``last`` on, added in order as ``itertools.accumulate`` does."""
    return np.cumsum(np.concatenate((np.array([last], dtype=values.dtype), values)))[1:]


def _rate(rate: tuple[float, Any], total_input: Ints) -> Floats:
    """:func:`loom_core.views.pricing.rate_at` for many calls: the last tier whose start
    the call's input passes, else the base rate."""
    base, tiers = rate
    out = np.full(len(total_input), base, dtype=np.float64)
    for start, price in tiers:
        out = np.where(total_input > start, price, out)
    return out


def prices(
    pricer: Any,
    effects: Ints,
    metas: Sequence[Any],
    tokens: tuple[Ints, Ints, Ints],
    first: int = 0,
) -> tuple[Floats, Ints, bool]:
    """USD (NaN: unpriced), offline marks and "every price known" of the priced effects.

    ``pricer`` is the run's :class:`loom_core.views.run_cost.RunPricer`; ``metas`` the
    typed metas of effects ``first`` on; ``tokens`` the context index's input, output and
    plain-usage columns of the priced effects. A plain
    call on a model priced by flat or tiered rates is priced here, a model at a time,
    with the arithmetic of ``Rates.cost``; any other goes through ``pricer.cost``.
    """
    listed = effects.tolist()
    offline_from = pricer.offline_from
    if pricer.needs_wire:
        costs = [pricer.cost(i) for i in listed]
        known = all(c is not None for c in costs)
        usd = np.array([np.nan if c is None else c for c in costs], dtype=np.float64)
        return usd, np.array([pricer.offline(i) for i in listed], dtype=np.int64), known
    recorded = list(map(_model, map(metas.__getitem__, (effects - first).tolist())))
    distinct = {m: pricer.model_name(m) for m in dict.fromkeys(recorded)}
    models = list(dict.fromkeys(distinct.values()))
    position = {m: models.index(name) for m, name in distinct.items()}
    group = np.fromiter(map(position.__getitem__, recorded), dtype=np.int64, count=len(listed))
    tail = np.zeros(len(listed), dtype=bool) if offline_from is None else effects >= offline_from
    offline_model = np.array([pricer.offline_model(m) for m in models], dtype=bool)
    offline = (tail | offline_model[group]).astype(np.int64)
    t_in, t_out, plain = tokens
    usd = np.full(len(listed), np.nan, dtype=np.float64)
    done = np.zeros(len(listed), dtype=bool)
    for g, model in enumerate(models):
        rates = pricer.plain_rates(model)
        if rates is None:
            continue
        take = (group == g) & (plain != 0) & ~tail
        n_in, n_out = t_in[take], t_out[take]
        usd[take] = (
            rates.per_request + _rate(rates.input, n_in) * n_in + _rate(rates.output, n_in) * n_out
        )
        done |= take
    known = True
    for k in np.flatnonzero(~done).tolist():
        cost = pricer.cost(listed[k])
        known = known and cost is not None
        usd[k] = np.nan if cost is None else cost
    return usd, offline, known
