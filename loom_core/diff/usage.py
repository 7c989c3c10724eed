"""Tokens and USD per effect of one run, for the diff's per-row and total deltas.

Why not the timeline: a diff needs only usage, and building a timeline also
rebuilds every context frame. Here model results are decoded with everything but
``usage`` left raw, which is cheap even for 100,000 effects. Counting follows
loom-format.md §10.5/§15: ``model`` effects at all depths, missing usage is 0, and
the calls other steps carry in ``meta.usage`` (:mod:`loom_core.views.billed`);
cost is :class:`loom_core.views.run_cost.RunPricer`'s (the one every view shows) and
is unknown (NaN) for an unpriced model.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass

import msgspec

from loom_core.formats.document import Document
from loom_core.formats.fastschema import decoder, fast_struct
from loom_core.formats.structs import FastModelResult
from loom_core.views.billed import meta_usage
from loom_core.views.run_cost import RunPricer

_usage_only = decoder(
    fast_struct(FastModelResult, frozenset({"text", "tool_calls", "stop_reason"}))
)
_LIMIT = 10**12  # one call's count is clamped so sums stay in int64 (hand-edited files)


def _count(value: object) -> int:
    if type(value) is int and -_LIMIT <= value <= _LIMIT:  # the usual case, first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return 0
    if isinstance(value, float) and math.isinf(value):  # (a huge int is clamped below)
        return _LIMIT if value > 0 else -_LIMIT
    return max(-_LIMIT, min(int(value), _LIMIT))


@dataclass(frozen=True)
class SideTotals:
    """One run's totals: effects, model tokens and USD (``None``: some call unpriced)."""

    effects: int
    input_tokens: int
    output_tokens: int
    cost: float | None

    def to_dict(self) -> dict[str, object]:
        return {
            "effects": self.effects,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost,
        }


@dataclass(frozen=True, eq=False)
class RunUsage:
    """Per-effect tokens and cost of one document (0 for non-model effects)."""

    tokens_in: array[int]
    tokens_out: array[int]
    cost: array[float]  # NaN: tokens spent on an unpriced model

    def totals(self) -> SideTotals:
        costs = self.cost
        known = not any(c != c for c in costs)
        return SideTotals(
            len(costs),
            sum(self.tokens_in),
            sum(self.tokens_out),
            math.fsum(costs) if known else None,
        )


def run_usage(doc: Document) -> RunUsage:
    """Tokens and cost of every effect of ``doc``."""
    n = len(doc.effects)
    t_in, t_out = array("q", bytes(8 * n)), array("q", bytes(8 * n))
    cost = array("d", bytes(8 * n))
    pricer = RunPricer(doc)
    for i, eff in enumerate(doc.effects):
        if eff.kind != "model":
            billed = meta_usage(eff.meta) if eff.meta is not None else None
            if billed is None:
                continue
            t_in[i] = _count(billed.get("input_tokens"))
            t_out[i] = _count(billed.get("output_tokens"))
        elif eff.result is None:
            continue
        else:
            try:
                usage = _usage_only.decode(eff.result).usage
            except msgspec.ValidationError:  # not an object: no usage (§1.4 tolerance)
                continue
            if usage is None:
                continue
            t_in[i], t_out[i] = _count(usage.input_tokens), _count(usage.output_tokens)
        c = pricer.cost(i)
        cost[i] = math.nan if c is None else c
    return RunUsage(t_in, t_out, cost)
