"""The facts ``summary --json`` reports, computed in one light pass.

It does not build context frames: only usage is decoded from model results, so
a headless summary of a huge trace costs little more than the checksum itself.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from loom_core.formats.document import Document, whole
from loom_core.formats.fastschema import decoder, fast_struct
from loom_core.formats.structs import FastModelResult
from loom_core.views.billed import meta_usage
from loom_core.views.pricing import provenance
from loom_core.views.run_cost import RunPricer

_usage_only = decoder(fast_struct(FastModelResult, frozenset({"text", "tool_calls"})))
_INT64 = 1 << 63


class _Head(msgspec.Struct, gc=False):
    """The two members of a model result the summary reads (the rest is skipped unread)."""

    stop_reason: Any = None
    usage: Any = None


_head = msgspec.json.Decoder(_Head)


def _typed_pair(raw: msgspec.Raw) -> tuple[int, int]:
    """Input and output tokens as the typed model result reads them (0 when it cannot)."""
    try:
        usage = _usage_only.decode(raw).usage
    except msgspec.ValidationError:
        return 0, 0
    if usage is None:
        return 0, 0
    return int(usage.input_tokens or 0), int(usage.output_tokens or 0)


def _small_int(value: Any) -> bool:
    return value is None or (type(value) is int and -_INT64 < value < _INT64)


def _pair(head: _Head, raw: msgspec.Raw) -> tuple[int, int]:
    """The usual result (a string stop reason, integer counts) read from ``head``; any
    other shape through the typed reader, so every result counts as it always has."""
    usage, stop = head.usage, head.stop_reason
    if stop is None or type(stop) is str:
        if usage is None:
            return 0, 0
        if type(usage) is dict:
            t_in, t_out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
            if _small_int(t_in) and _small_int(t_out):
                return t_in or 0, t_out or 0
    return _typed_pair(raw)


def _billed(
    pricer: RunPricer, i: int, sums: tuple[int, int, float | None]
) -> tuple[int, int, float | None]:
    """``sums`` (input, output, USD) with the call that effect ``i`` -- not a model effect
    -- carries in its meta (:mod:`loom_core.views.billed`) added."""
    usage = meta_usage(pricer.doc.effects[i].meta)
    if usage is None:
        return sums
    t_in, t_out, total = sums
    cost = pricer.cost(i, usage) if total is not None else None
    total = None if cost is None or total is None else total + cost
    return (
        t_in + whole(usage.get("input_tokens")),
        t_out + whole(usage.get("output_tokens")),
        total,
    )


def usage_and_cost(doc: Document) -> tuple[int, int, float | None]:
    """Input and output tokens of every model effect (all depths) and their USD (``None``
    when a call with tokens used an unpriced model), in one pass: each model result is
    scanned once, for both the counts and the price."""
    pricer = RunPricer(doc)
    t_in = t_out = 0
    total: float | None = 0.0
    for i, eff in enumerate(doc.effects):
        if eff.kind != "model":
            if eff.meta is not None and eff.meta.usage is not None:  # a call beside the model
                t_in, t_out, total = _billed(pricer, i, (t_in, t_out, total))
            continue
        raw = eff.result
        try:
            head = _head.decode(raw) if raw is not None else _Head()
        except msgspec.ValidationError:  # not an object: no usage (§1.4 tolerance)
            head = None
        if head is not None:
            pair = _pair(head, raw) if raw is not None else (0, 0)
            t_in, t_out = t_in + pair[0], t_out + pair[1]
        if total is not None:
            cost = pricer.model_cost(i, head.usage if head is not None else None)
            total = None if cost is None else total + cost
    return t_in, t_out, total


def summarize(
    doc: Document,
    checksum: str,
    usage: tuple[int, int, float | None] | None = None,
    samples: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Everything the CLI's ``summary --json`` prints, as plain values; ``usage`` is
    :func:`usage_and_cost` when the caller computed it already (while the checksum ran).

    ``samples``: the runs of a file that holds several (an Inspect AI log's samples,
    :func:`loom_core.formats.inspect_eval.sample_list`); ``sample`` then says which one
    this is (its entry of that list; ``null`` for a file of one run)."""
    t_in, t_out, cost = usage_and_cost(doc) if usage is None else usage
    h = doc.header
    facts: dict[str, Any] = {
        "path": doc.path,
        "format": doc.format,
        "version": doc.extra.get("journal_version", h.version),
        "recorded_via": h.recorded_via,
        "model": h.model,
        "effects": len(doc.effects),
        "kinds": [eff.kind or "" for eff in doc.effects],
        "depths": sorted({eff.depth or 0 for eff in doc.effects}),
        "input_tokens": t_in,
        "output_tokens": t_out,
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
        "sample": _shown(doc, samples or []),
        "samples": samples or [],
    }
    if doc.format == "journal":
        facts["unfinished"] = [{"seq": u.seq, "kind": u.kind} for u in doc.unfinished]
        facts["torn"] = doc.torn
    return facts


def _shown(doc: Document, samples: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The sample ``doc`` is (its entry of ``samples`` when listed), or None: one run."""
    shown = doc.extra.get("sample")
    if not isinstance(shown, dict):
        return None
    key = (str(shown.get("id")), shown.get("epoch"))
    found = next((s for s in samples if (str(s.get("id")), s.get("epoch")) == key), None)
    return dict(found) if found else {"id": key[0], "epoch": key[1]}
