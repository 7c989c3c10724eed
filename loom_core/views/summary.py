"""The facts ``summary --json`` reports, computed in one light pass.

It does not build context frames: only usage is decoded from model results, so
a headless summary of a huge trace costs little more than the checksum itself.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from loom_core.formats.document import Document
from loom_core.formats.fastschema import decoder, fast_struct
from loom_core.formats.schema import ModelResult
from loom_core.views.pricing import provenance
from loom_core.views.run_cost import RunPricer

_usage_only = decoder(fast_struct(ModelResult, frozenset({"text", "tool_calls"})))


def model_usage(doc: Document) -> list[tuple[int, int, int]]:
    """(effect index, input tokens, output tokens) of every model effect, all depths."""
    out = []
    for i, eff in enumerate(doc.effects):
        if eff.kind != "model":
            continue
        t_in = t_out = 0
        try:
            usage = _usage_only.decode(eff.result).usage if eff.result is not None else None
        except msgspec.ValidationError:
            usage = None
        if usage is not None:
            t_in, t_out = int(usage.input_tokens or 0), int(usage.output_tokens or 0)
        out.append((i, t_in, t_out))
    return out


def total_cost(doc: Document, usage: list[tuple[int, int, int]]) -> float | None:
    """USD over all model calls; ``None`` when a call with tokens used an unpriced model."""
    pricer = RunPricer(doc)
    total = 0.0
    for i, _t_in, _t_out in usage:
        cost = pricer.cost(i)
        if cost is None:
            return None
        total += cost
    return total


def summarize(doc: Document, checksum: str) -> dict[str, Any]:
    """Everything the CLI's ``summary --json`` prints, as plain values."""
    usage = model_usage(doc)
    h = doc.header
    cost = total_cost(doc, usage)
    facts: dict[str, Any] = {
        "path": doc.path,
        "format": doc.format,
        "version": doc.extra.get("journal_version", h.version),
        "recorded_via": h.recorded_via,
        "model": h.model,
        "effects": len(doc.effects),
        "kinds": [eff.kind or "" for eff in doc.effects],
        "depths": sorted({eff.depth or 0 for eff in doc.effects}),
        "input_tokens": sum(u[1] for u in usage),
        "output_tokens": sum(u[2] for u in usage),
        "output": h.output or "",
        "shield_events": len(doc.shield_events),
        "paused": h.paused,
        "pending": h.pending,
        "truncated": h.truncated,
        "stop_reason": h.stop_reason or "",
        "episodes": doc.episodes,
        "checksum": checksum,
        "cost_usd": None if cost is None or math.isnan(cost) else round(cost, 6),
        "prices": provenance(),
        "warnings": list(doc.warnings),
    }
    if doc.format == "journal":
        facts["unfinished"] = [{"seq": u.seq, "kind": u.kind} for u in doc.unfinished]
        facts["torn"] = doc.torn
    return facts
