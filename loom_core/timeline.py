"""Derived views of a run: steps, tokens, cost, flags, call/result pairs.

A *step* is one effect of the log, plus one step per user episode placed just
before the effect that starts acting on it. Everything per step lives in flat
arrays built in one pass, so a 100,000-step timeline costs a few megabytes and
any question about one step is answered without walking the trace. Context
frames are in :mod:`loom_core.context`; shield placement in :mod:`loom_core.shield_place`.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any

from .context import ContextIndex, build_context
from .document import Document
from .pricing import price_of
from .shield_place import place_shield_events

# kind codes: index into KINDS (colour and filtering use them)
KINDS = ("episode", "model", "tool", "human", "time", "memory", "compact", "edit",
         "sample", "choose", "critic", "other")
K_EPISODE, K_MODEL, K_TOOL, K_HUMAN = 0, 1, 2, 3
_CODE = {k: i for i, k in enumerate(KINDS)}

# flag bits
F_ERROR, F_BLOCKED, F_DRYRUN, F_SHIELD, F_DENIED, F_UNFINISHED = 1, 2, 4, 8, 16, 32
_PREFIXES = ((b'"ERROR:', F_ERROR), (b'"BLOCKED:', F_BLOCKED), (b'"DRY-RUN:', F_DRYRUN))


def kind_code(kind: str) -> int:
    """Kind code of an effect kind (``tool:<name>`` folds into ``tool``)."""
    if kind.startswith("tool:"):
        return K_TOOL
    return _CODE.get(kind, _CODE["other"])


def result_flags(raw: Any) -> int:
    """ERROR/BLOCKED/DRY-RUN flags from the first bytes of a raw tool result."""
    if raw is None:
        return 0
    head = bytes(memoryview(raw)[:10])
    for prefix, flag in _PREFIXES:
        if head.startswith(prefix):
            return flag
    return 0


@dataclass
class Timeline:
    """Per-step arrays and indexes of one document (read-only once built)."""

    doc: Document
    effect_of: array = field(default_factory=lambda: array("i"))  # step -> effect or -1
    episode_of: array = field(default_factory=lambda: array("i"))  # step -> episode or -1
    kind: array = field(default_factory=lambda: array("B"))
    depth: array = field(default_factory=lambda: array("H"))
    agent: array = field(default_factory=lambda: array("H"))
    tokens_in: array = field(default_factory=lambda: array("q"))
    tokens_out: array = field(default_factory=lambda: array("q"))
    cum_tokens: array = field(default_factory=lambda: array("q"))
    cost: array = field(default_factory=lambda: array("d"))  # NaN: unpriced model
    cum_cost: array = field(default_factory=lambda: array("d"))
    flags: array = field(default_factory=lambda: array("B"))
    agents: list[str] = field(default_factory=list)
    step_of_effect: array = field(default_factory=lambda: array("i"))
    calls_of: dict[int, list[int]] = field(default_factory=dict)  # model step -> result steps
    call_of: dict[int, int] = field(default_factory=dict)  # result step -> model step
    shield_at: dict[int, list[int]] = field(default_factory=dict)  # step -> shield event idx
    context: ContextIndex | None = None
    cost_known: bool = True

    def __len__(self) -> int:
        return len(self.kind)

    # -- totals ---------------------------------------------------------------
    @property
    def input_tokens(self) -> int:
        return int(sum(self.tokens_in))

    @property
    def output_tokens(self) -> int:
        return int(sum(self.tokens_out))

    @property
    def total_cost(self) -> float | None:
        """Total USD, or ``None`` when any model call used an unpriced model."""
        if not self.cost_known:
            return None
        return self.cum_cost[-1] if len(self.cum_cost) else 0.0

    def kind_name(self, step: int) -> str:
        """The effect kind of a step (``tool:name`` kept), or ``episode``."""
        e = self.effect_of[step]
        return "episode" if e < 0 else (self.doc.effects[e].kind or "")

    def steps_of_kind(self, step: int) -> tuple[int | None, int | None]:
        """Previous and next step with the same kind name as ``step``."""
        name = self.kind_name(step)
        prev = next((s for s in range(step - 1, -1, -1) if self.kind_name(s) == name), None)
        nxt = next((s for s in range(step + 1, len(self)) if self.kind_name(s) == name), None)
        return prev, nxt


def _agent_label(doc: Document, meta_agent: str | None, meta: dict[str, Any], names: dict) -> str:
    if meta_agent:
        return meta_agent
    sys_hash = meta.get("sys_hash")
    if sys_hash:
        if sys_hash not in names:
            names[sys_hash] = "main" if not names else meta.get("sys_role") or f"agent {sys_hash[:6]}"
        return names[sys_hash]
    return "main" if doc.is_proxy else ""


def build_timeline(doc: Document) -> Timeline:
    """Build every per-step array in one pass over the log."""
    tl = Timeline(doc=doc)
    ctx = build_context(doc)
    tl.context = ctx
    default_model = doc.header.model if isinstance(doc.header.model, str) else ""
    agent_ids: dict[str, int] = {}
    proxy_names: dict[str, str] = {}
    cum_t, cum_c = 0, 0.0
    episode_before = ctx.episode_before  # effect index -> episode index placed before it

    def add_step(effect: int, episode: int, kind: int, depth: int, agent: str) -> None:
        tl.effect_of.append(effect)
        tl.episode_of.append(episode)
        tl.kind.append(kind)
        tl.depth.append(depth)
        tl.agent.append(agent_ids.setdefault(agent, len(agent_ids)))

    def add_numbers(t_in: int, t_out: int, cost: float, flags: int) -> None:
        nonlocal cum_t, cum_c
        cum_t += t_in + t_out
        if not math.isnan(cost):
            cum_c += cost
        tl.tokens_in.append(t_in)
        tl.tokens_out.append(t_out)
        tl.cum_tokens.append(cum_t)
        tl.cost.append(cost)
        tl.cum_cost.append(cum_c)
        tl.flags.append(flags)

    for i, eff in enumerate(doc.effects):
        for ep in episode_before.get(i, ()):
            add_step(-1, ep, K_EPISODE, 0, "user")
            add_numbers(0, 0, 0.0, 0)
        kind_s = eff.kind or ""
        code = kind_code(kind_s)
        meta = ctx.meta_of(i)
        label = _agent_label(doc, meta.get("agent"), meta, proxy_names)
        tl.step_of_effect.append(len(tl.kind))
        add_step(i, -1, code, eff.depth or 0, label)
        t_in = t_out = 0
        cost = 0.0
        flags = result_flags(eff.result) if code == K_TOOL else 0
        if code == K_MODEL:
            usage = ctx.usage_of(i)
            t_in, t_out = usage
            price = price_of(meta.get("model") or default_model)
            if price is None:
                cost = math.nan
                if t_in or t_out:
                    tl.cost_known = False
            else:
                cost = price.cost(t_in, t_out)
        add_numbers(t_in, t_out, cost, flags)
    for ep in episode_before.get(len(doc.effects), ()):
        add_step(-1, ep, K_EPISODE, 0, "user")
        add_numbers(0, 0, 0.0, 0)
    tl.agents = list(agent_ids)
    _pairs(tl, ctx)
    _mark_unfinished(tl)
    tl.shield_at = place_shield_events(doc, tl)
    for step in tl.shield_at:
        tl.flags[step] |= F_SHIELD
        if any((doc.shield_events[e].action == "deny") for e in tl.shield_at[step]):
            tl.flags[step] |= F_DENIED
    return tl


def _pairs(tl: Timeline, ctx: ContextIndex) -> None:
    for result_eff, call_eff in ctx.result_pairs.items():
        r, c = tl.step_of_effect[result_eff], tl.step_of_effect[call_eff]
        tl.call_of[r] = c
        tl.calls_of.setdefault(c, []).append(r)


def _mark_unfinished(tl: Timeline) -> None:
    """Flag the last step when the journal ends inside an effect (paused or crashed)."""
    if tl.doc.unfinished and len(tl):
        tl.flags[len(tl) - 1] |= F_UNFINISHED
