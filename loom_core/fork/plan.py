"""What a fork will cost before anything is spent (a dry run).

Why an estimate from the parent: the best guess for a re-run's shape is the run it
re-lives. Each expected live call is one of the parent's remaining top-level model
calls (from the fork step on, capped by ``max_turns``), with the parent's recorded
usage shifted by how much the edit grew or shrank the context; calls without
recorded usage fall back to the edited context's estimated size. The prefix before
the fork step replays free. Money comes from :func:`loom_core.views.pricing.call_cost`, the
function every view prices a step with; an unpriced model gives ``None``, never a
silent zero. Each call keeps its recorded split (cache reads and writes, reasoning)
and the tokens the edit adds are billed as uncached input, so a call the edit leaves
unchanged is estimated at exactly what it cost in the parent (the number its step
shows). A re-run on the scripted provider is offline and costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom_core.fork.context import ForkContext
from loom_core.fork.edits import Edit
from loom_core.fork.items import context_tokens
from loom_core.fork.point import apply_edit, fork_context
from loom_core.formats.document import Document
from loom_core.providers.base import Provider
from loom_core.views.pricing import TokenUsage, call_cost, is_offline
from loom_core.views.run_cost import RunPricer


@dataclass
class Plan:
    """The dry run's numbers."""

    step: int
    turn: int
    replayed: int  # effects before the fork step, copied without any call
    live_calls: int  # expected model calls
    max_turns: int
    context_tokens: int  # estimated size of the edited context at the fork step
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: the model is not in the price table
    model: str
    source: str  # "request" | "frame"
    edit: str  # the edit in words
    provider: str | None = None
    available: bool | None = None  # None: no provider given
    unavailable_reason: str = ""
    offline: bool = False  # answered without a provider: costs nothing

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "total_tokens": self.total_tokens}


def _size(ctx: ForkContext) -> int:
    return context_tokens(ctx.system, ctx.messages, ctx.tools)


def _usage(doc: Document, i: int) -> tuple[int, int]:
    usage = doc.model_result(i).usage
    if usage is None:
        return 0, 0
    return int(usage.input_tokens or 0), int(usage.output_tokens or 0)


def _shifted(rec: TokenUsage, est_in: int) -> TokenUsage:
    """The recorded call with ``est_in`` input tokens: added ones are uncached, a shrink
    takes uncached tokens first."""
    read = min(rec.cache_read, est_in)
    write = min(rec.cache_write, est_in - read)
    return rec._replace(
        input=est_in,
        cache_read=read,
        cache_write=write,
        cache_write_1h=min(rec.cache_write_1h, write),
    )


def dry_run(
    doc: Document,
    path: str | Path,
    seq: int,
    edit: Edit,
    max_turns: int,
    provider: Provider | None = None,
) -> Plan:
    """Estimate a model re-run of ``doc`` from model step ``seq`` with ``edit``.

    ValueError for a bad fork point or an edit that does not apply (as the real run).
    """
    base = fork_context(doc, path, seq)
    ctx = apply_edit(base, edit)
    tail = [
        i
        for i in range(base.index, len(doc.effects))
        if doc.effects[i].kind == "model" and not doc.effects[i].depth
    ]
    live = max(1, min(len(tail), max_turns))
    size, delta = _size(ctx), _size(ctx) - _size(base)
    model = ctx.model or str(getattr(provider, "model", "") or "")
    offline = is_offline(model) or getattr(provider, "name", "") == "scripted"
    pricer = RunPricer(doc)
    t_in = t_out = 0
    cost: float | None = 0.0
    for i in tail[:live]:
        rec_in, rec_out = _usage(doc, i)  # tokens as loom counts them (its budget's)
        est_in = max(0, rec_in + delta) if rec_in > 0 else size
        t_in, t_out = t_in + est_in, t_out + rec_out
        rec = pricer.usage(i)  # the whole split the call was billed for
        billed = (
            _shifted(rec, max(0, rec.input + delta)) if rec_in > 0 else TokenUsage(size, rec_out)
        )
        one = 0.0 if offline else call_cost(model, billed)
        cost = None if cost is None or one is None else cost + one
    plan = Plan(
        seq,
        base.turn,
        base.index,
        live,
        max_turns,
        size,
        t_in,
        t_out,
        cost,
        model,
        base.source,
        edit.describe(),
        offline=offline,
    )
    if provider is not None:
        ok, why = provider.available()
        plan.provider, plan.available, plan.unavailable_reason = provider.name, ok, why
    return plan
