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
from itertools import accumulate
from dataclasses import dataclass, field
from typing import Any

from .context import ContextIndex, build_context
from .document import Document
from .pricing import call_cost
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


def _nbytes(raw: Any) -> int:
    return 0 if raw is None else memoryview(raw).nbytes


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
    size: array = field(default_factory=lambda: array("q"))  # bytes of the step's payload
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
    def bar_height(self, step: int) -> float:
        """Tokens of a model step, else an estimate of the payload's tokens (bytes / 4)."""
        tokens = self.tokens_in[step] + self.tokens_out[step]
        return float(tokens) if tokens else self.size[step] / 4.0

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


class _AgentNames:
    """Agent labels: the harness records names; proxy agents are told apart by system hash."""

    def __init__(self, proxy: bool) -> None:
        self.proxy = proxy
        self.by_hash: dict[str, str] = {}

    def label(self, meta: Any) -> str:
        if meta.agent:
            return meta.agent
        if meta.sys_hash:
            if meta.sys_hash not in self.by_hash:
                first = not self.by_hash
                self.by_hash[meta.sys_hash] = "main" if first else (
                    meta.sys_role or f"agent {meta.sys_hash[:6]}")
            return self.by_hash[meta.sys_hash]
        return "main" if self.proxy else ""


def _step_order(n_effects: int, episode_before: dict[int, list[int]]) -> tuple[list[int], list[int]]:
    """Interleave episodes into the effect order: (effect_of, episode_of) per step."""
    effect_of: list[int] = []
    episode_of: list[int] = []
    last = 0
    for at in sorted(episode_before):
        effect_of.extend(range(last, at))
        episode_of.extend([-1] * (at - last))
        for ep in episode_before[at]:
            effect_of.append(-1)
            episode_of.append(ep)
        last = at
    effect_of.extend(range(last, n_effects))
    episode_of.extend([-1] * (n_effects - last))
    return effect_of, episode_of


def _costs(doc: Document, ctx: ContextIndex, effects: list[int], codes: list[int],
           t_in: list[int], t_out: list[int]) -> tuple[list[float], bool]:
    """Per-step USD (NaN when the model is unpriced) and whether the total is known."""
    default = doc.header.model if isinstance(doc.header.model, str) else ""
    costs = [0.0] * len(effects)
    known = True
    for s, e in enumerate(effects):
        if codes[s] == K_MODEL:
            cost = call_cost(ctx.metas[e].model or default, t_in[s], t_out[s])
            known = known and cost is not None
            costs[s] = math.nan if cost is None else cost
    return costs, known


def build_timeline(doc: Document) -> Timeline:
    """Build every per-step array with bulk list operations (no per-step calls)."""
    ctx = build_context(doc)
    effects = doc.effects
    effect_of, episode_of = _step_order(len(effects), ctx.episode_before)
    code_cache: dict[str, int] = {}
    kinds = [eff.kind or "" for eff in effects]
    eff_codes = [code_cache.get(k) if k in code_cache else code_cache.setdefault(k, kind_code(k))
                 for k in kinds]
    codes = [K_EPISODE if e < 0 else eff_codes[e] for e in effect_of]
    depths = [0 if e < 0 else (effects[e].depth or 0) for e in effect_of]
    if depths and (min(depths) < 0 or max(depths) > 0xFFFF):  # malformed depths fit the array
        depths = [min(max(d, 0), 0xFFFF) for d in depths]
    label = _AgentNames(doc.is_proxy).label
    metas = ctx.metas
    labels = [m.agent or label(m) for m in metas]
    agent_ids: dict[str, int] = {}
    agents = [agent_ids.setdefault("user" if e < 0 else labels[e], len(agent_ids))
              for e in effect_of]
    ins, outs = ctx.tokens_in, ctx.tokens_out
    t_in = [0 if e < 0 else ins[e] for e in effect_of]
    t_out = [0 if e < 0 else outs[e] for e in effect_of]
    flags = [result_flags(effects[e].result) if c == K_TOOL else 0
             for e, c in zip(effect_of, codes)]
    costs, known = _costs(doc, ctx, effect_of, codes, t_in, t_out)
    eps = doc.episodes
    sizes = [len(eps[episode_of[s]]) if e < 0 else _nbytes(effects[e].result)
             for s, e in enumerate(effect_of)]
    tl = Timeline(
        doc=doc, effect_of=array("i", effect_of), episode_of=array("i", episode_of),
        kind=array("B", codes), depth=array("H", depths), agent=array("H", agents),
        tokens_in=array("q", t_in), tokens_out=array("q", t_out),
        cum_tokens=array("q", accumulate(a + b for a, b in zip(t_in, t_out))),
        cost=array("d", costs),
        cum_cost=array("d", accumulate(0.0 if math.isnan(c) else c for c in costs)),
        flags=array("B", flags), size=array("q", sizes), agents=list(agent_ids), context=ctx, cost_known=known,
    )
    step_of_effect = array("i", [0]) * len(effects)
    for s, e in enumerate(effect_of):
        if e >= 0:
            step_of_effect[e] = s
    tl.step_of_effect = step_of_effect
    _pairs(tl, ctx)
    _mark_unfinished(tl)
    tl.shield_at = place_shield_events(doc, tl)
    for step, events in tl.shield_at.items():
        tl.flags[step] |= F_SHIELD
        if any(doc.shield_events[e].action == "deny" for e in events):
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
