"""Derived views of a run: steps, tokens, cost, flags, call/result pairs.

A *step* is one effect of the log, plus one step per user episode placed just
before the effect that starts acting on it. Everything per step lives in flat
arrays built in one pass, so a 100,000-step timeline costs a few megabytes and
any question about one step is answered without walking the trace. Context
frames are in :mod:`loom_core.views.context`; shield placement in :mod:`loom_core.views.shield_place`.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np

from loom_core.formats.document import EMPTY_META, Document
from loom_core.views import columns
from loom_core.views.context import ContextIndex, ContextWalker, keep_walk
from loom_core.views.pricing import OFFLINE_TEXT, cost_words, format_usd
from loom_core.views.run_cost import RunPricer
from loom_core.views.shield_place import place_shield_events

# kind codes: index into KINDS (colour and filtering use them)
KINDS = (
    "episode",
    "model",
    "tool",
    "human",
    "time",
    "memory",
    "compact",
    "edit",
    "sample",
    "choose",
    "critic",
    "other",
)
K_EPISODE, K_MODEL, K_TOOL, K_HUMAN = 0, 1, 2, 3
# A user prompt row is called "prompt" wherever a kind is named: the step list, the legend,
# the context view, the filter, the commands and the exported page. KINDS keeps the code's
# word ("episode", loom's) for what is stored, such as the run library's index.
PROMPT = "prompt"
KIND_NAMES = (PROMPT, *KINDS[1:])  # KINDS as they are shown and typed
_CODE = {k: i for i, k in enumerate(KINDS)}

# Where a seq beyond a float's range (a hand-edited 10**400; loom's JSON has no integer
# limit) is placed and sorted in Timeline.seqs.
SEQ_LIMIT = 1e300
# Steps whose columns are laid out in one go. Why not all of a run's at once: each column
# is a C-level pass (map, fromiter, a numpy gather) that holds the interpreter lock
# throughout, tens of milliseconds over a million effects, and the window's thread waits
# for it (the longest stalls while a big run loaded). Between slices the lock can pass.
APPEND_SLICE = 1 << 16

# flag bits
F_ERROR, F_BLOCKED, F_DRYRUN, F_SHIELD, F_DENIED, F_UNFINISHED = 1, 2, 4, 8, 16, 32
_PREFIXES = ((b'"ERROR:', F_ERROR), (b'"BLOCKED:', F_BLOCKED), (b'"DRY-RUN:', F_DRYRUN))
_FLAG_LETTERS = frozenset(prefix[1] for prefix, _flag in _PREFIXES)


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
    view = memoryview(raw)
    if len(view) < 7 or view[1] not in _FLAG_LETTERS:  # most results: no copy of a head
        return 0
    head = bytes(view[:10])
    for prefix, flag in _PREFIXES:
        if head.startswith(prefix):
            return flag
    return 0


@dataclass
class Timeline:
    """Per-step arrays and indexes of one document (read-only once built)."""

    doc: Document
    effect_of: array[int] = field(default_factory=lambda: array("i"))  # step -> effect or -1
    episode_of: array[int] = field(default_factory=lambda: array("i"))  # step -> episode or -1
    kind: array[int] = field(default_factory=lambda: array("B"))
    depth: array[int] = field(default_factory=lambda: array("H"))
    agent: array[int] = field(default_factory=lambda: array("H"))
    tokens_in: array[int] = field(default_factory=lambda: array("q"))
    tokens_out: array[int] = field(default_factory=lambda: array("q"))
    cum_tokens: array[int] = field(default_factory=lambda: array("q"))
    cost: array[float] = field(default_factory=lambda: array("d"))  # NaN: unpriced model
    offline: array[int] = field(default_factory=lambda: array("B"))  # 1: answered offline, free
    cum_cost: array[float] = field(default_factory=lambda: array("d"))
    flags: array[int] = field(default_factory=lambda: array("B"))
    size: array[int] = field(default_factory=lambda: array("q"))  # bytes of the step's payload
    agents: list[str] = field(default_factory=list)
    step_of_effect: array[int] = field(default_factory=lambda: array("i"))
    # effect -> its seq by effect_seq's rule (null: the position; clamped to SEQ_LIMIT),
    # read once in the worker
    seqs: array[float] = field(default_factory=lambda: array("d"))
    # effect -> its kind's name (an id into kind_names) and its raw result: what the filter
    # and kind navigation read, so they never decode a big run's effects again
    # (loom_core.formats.lazy_effects)
    effect_kind: array[int] = field(default_factory=lambda: array("I"))
    kind_names: list[str] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    # step -> the model step whose call it answers, or -1. An array, not a dict (and no
    # model step -> results dict): two dicts of Python ints were 13 MB at 100,000 effects.
    call_of: array[int] = field(default_factory=lambda: array("i"))
    shield_at: dict[int, list[int]] = field(default_factory=dict)  # step -> shield event idx
    context: ContextIndex | None = None
    cost_known: bool = True

    def __len__(self) -> int:
        return len(self.kind)

    # -- totals ---------------------------------------------------------------
    # Totals are kept up to date by the builder: a status bar asks on every cursor move.
    input_tokens: int = 0
    output_tokens: int = 0
    offline_steps: int = 0  # model steps answered offline (scripted): they cost nothing

    @property
    def total_cost(self) -> float | None:
        """Total USD, or ``None`` when any model call used an unpriced model."""
        if not self.cost_known:
            return None
        return self.cum_cost[-1] if len(self.cum_cost) else 0.0

    def cost_text(self, step: int | None = None) -> str:
        """Step ``step``'s cost (``None``: the run's) in the words every view uses:
        ``$0.0123``, ``?`` unpriced, ``$0 offline`` for a scripted answer, ``""`` none."""
        if step is None:
            return cost_words(self.total_cost, self.offline_steps > 0)
        if step < len(self.offline) and self.offline[step]:
            return OFFLINE_TEXT
        return format_usd(self.cost[step])

    def call_position(self, result: int) -> int:
        """Which of its call's results ``result`` is (0 for the first), or -1 when no call
        made it. Counts the steps between the call and it (a C-level count; calls' results
        follow them closely, a sub-agent's after its whole run)."""
        caller = self.call_of[result] if 0 <= result < len(self.call_of) else -1
        return -1 if caller < 0 else self.call_of[caller + 1 : result].count(caller)

    def kind_name(self, step: int) -> str:
        """The effect kind of a step (``tool:name`` kept), or ``prompt`` for a user prompt."""
        e = self.effect_of[step]
        return PROMPT if e < 0 else self.kind_names[self.effect_kind[e]]

    def steps_of_kind(self, step: int) -> tuple[int | None, int | None]:
        """Previous and next step with the same kind name as ``step`` (``tool:x`` exact).

        Candidates come from the kind-code array's C-level ``index``; only they are
        compared by name, so a jump costs little even in a 100,000-step run.
        """
        code, name = self.kind[step], self.kind_name(step)

        def find(codes: array[int], to_step: Callable[[int], int]) -> int | None:
            start = 0
            while True:
                try:
                    i = codes.index(code, start)
                except ValueError:
                    return None
                if self.kind_name(to_step(i)) == name:
                    return to_step(i)
                start = i + 1

        nxt = find(self.kind[step + 1 :], lambda i: step + 1 + i)
        prev = find(self.kind[:step][::-1], lambda i: step - 1 - i)
        return prev, nxt


class _AgentNames:
    """Agent labels: the harness records names; proxy agents are told apart by system hash."""

    def __init__(self, proxy: bool) -> None:
        self.proxy = proxy
        self.by_hash: dict[str, str] = {}

    def label(self, meta: Any) -> str:
        if meta.agent:
            return str(meta.agent)
        if meta.sys_hash:
            if meta.sys_hash not in self.by_hash:
                first = not self.by_hash
                self.by_hash[meta.sys_hash] = (
                    "main" if first else (meta.sys_role or f"agent {meta.sys_hash[:6]}")
                )
            return self.by_hash[meta.sys_hash]
        return "main" if self.proxy else ""


def _step_order(
    start: int, end: int, episode_before: dict[int, list[int]], final: bool
) -> tuple[columns.Ints, columns.Ints]:
    """Interleave episodes into effects ``start..end``: (effect_of, episode_of) per step.

    Episodes placed before effect ``end`` itself belong to this range only when the
    log is final (nothing more will come to carry them). Built with numpy: a whole
    run's range as Python lists and their conversion were single C calls of tens of
    milliseconds each at a million effects, the window's thread waiting for the
    interpreter lock meanwhile (the longest stall until the plot, 112 ms).
    """
    stops = sorted(at for at in episode_before if start <= at < end or (final and at == end))
    effect_of = np.arange(start, end, dtype=np.int64)
    if not stops:
        return effect_of, np.full(end - start, -1, dtype=np.int64)
    eps = [episode_before[at] for at in stops]
    counts = np.array([len(e) for e in eps], dtype=np.int64)
    # each episode goes just before its effect ``at``, after those already placed there
    before = np.repeat(np.array(stops, dtype=np.int64) - start, counts)
    steps = np.insert(effect_of, before, -1)
    episodes = np.full(len(steps), -1, dtype=np.int64)
    episodes[before + np.arange(len(before))] = [ep for e in eps for ep in e]
    return steps, episodes


class TimelineBuilder:
    """Builds a timeline's arrays for a range of effects at a time (append-only).

    :func:`build_timeline` runs it once over a finished document; a live journal
    calls :meth:`extend` as effects arrive and inserts only the new rows.
    """

    def __init__(self, doc: Document) -> None:
        self.walker = ContextWalker(doc)
        self.tl = Timeline(doc=doc, context=self.walker.index)
        self.tl.step_of_effect = array("i")
        self._label = _AgentNames(doc.is_proxy).label
        self._agent_ids: dict[str, int] = {}
        self._names: dict[Any, int] = {}  # a kind as recorded (None too) -> its name's id
        self._code_of_name = array("B")  # a name's id -> its kind code
        self._pricer = RunPricer(doc)

    def extend(
        self, upto: int | None = None, final: bool = False, unfinished: bool = False
    ) -> range:
        """Add steps for effects not yet seen (up to ``upto``); returns the new step range."""
        tl, doc = self.tl, self.tl.doc
        first_step = len(tl)
        new = self.walker.extend(upto)
        if final and upto is None:
            self.walker.finish()
        every, episodes = _step_order(new.start, new.stop, self.walker.index.episode_before, final)
        at = new.start
        for s in range(0, len(every), APPEND_SLICE):
            part = every[s : s + APPEND_SLICE]
            n = int(np.count_nonzero(part >= 0))  # a slice's effects follow the last one's
            fresh = doc.effects[at : at + n]
            self._append(
                doc, fresh, columns.StepMap.of(part, at, n), episodes[s : s + APPEND_SLICE]
            )
            self._append_seqs(fresh, at)
            at += n
        columns.put(tl.step_of_effect, np.flatnonzero(every >= 0) + first_step)
        _pairs(tl, self.walker.index, new)
        _mark_unfinished(tl, first_step, unfinished)
        tl.agents = list(self._agent_ids)
        return range(first_step, len(tl))

    def finish(self) -> Timeline:
        """The document is whole: its last effects, what only a finished log places
        (episodes after the last effect) and the shield decisions. A big trace's load
        extends the builder a few runs of entries at a time and finishes it here
        (:mod:`loom_core.formats.progressive`); :func:`build_timeline` all at once."""
        self.extend(final=True, unfinished=bool(self.tl.doc.unfinished))
        keep_walk(self.tl.doc, self.walker.index)  # a fork from this run walks nothing again
        return _finished(self.tl)

    def _kind_codes(self, fresh: Sequence[Any]) -> columns.Ints:
        """Each new effect's kind code; its kind name's id goes to ``tl.effect_kind``."""
        tl, ids = self.tl, self._names
        kinds = columns.kinds(fresh)
        for kind in set(kinds) - ids.keys():
            ids[kind] = len(tl.kind_names)
            tl.kind_names.append(kind or "")
            self._code_of_name.append(kind_code(kind or ""))
        named = array("I", map(ids.__getitem__, kinds))
        tl.effect_kind.extend(named)
        codes = np.frombuffer(self._code_of_name, dtype=np.uint8)
        return codes[np.frombuffer(named, dtype=np.uint32)].astype(np.int64)

    def _append_seqs(self, fresh: Sequence[Any], start: int) -> None:
        seqs = columns.seqs(fresh, start)
        try:
            self.tl.seqs.extend(array("d", seqs))
        except OverflowError:  # a seq beyond a float's range: placed at the limit
            self.tl.seqs.extend(array("d", [min(max(s, -SEQ_LIMIT), SEQ_LIMIT) for s in seqs]))

    def _costs(
        self,
        codes: columns.Ints,
        steps: columns.StepMap,
        metas: list[Any],
        tokens: tuple[columns.Ints, columns.Ints],
    ) -> tuple[columns.Floats, columns.Ints, bool]:
        """Per-step USD (NaN when the model is unpriced), offline marks, and whether every
        price is known. Priced are model steps and the steps that carry a call's usage
        beside a model effect (:mod:`loom_core.views.billed`), all through one
        :class:`RunPricer` as every other face prices them."""
        ctx = self.walker.index
        priced = codes == K_MODEL
        if ctx.billed:
            priced |= (codes != K_EPISODE) & np.isin(steps.effect_of, list(ctx.billed))
        lo, hi = steps.start, steps.start + steps.n
        plain = steps.spread(columns.ints(ctx.plain_usage[lo:hi]))
        t_in, t_out = tokens
        counts = (t_in[priced], t_out[priced], plain[priced])
        effects = steps.effect_of[priced]
        usd, marks, known = columns.prices(self._pricer, effects, metas, counts, first=lo)
        costs = np.zeros(len(codes), dtype=np.float64)
        offline = np.zeros(len(codes), dtype=np.int64)
        costs[priced], offline[priced] = usd, marks
        return costs, offline, known

    def _append(
        self, doc: Document, fresh: Sequence[Any], steps: columns.StepMap, episode_of: Any
    ) -> None:
        """Lay the new steps' columns out (:mod:`loom_core.views.columns`)."""
        tl, ctx, put = self.tl, self.walker.index, columns.put
        lo, hi = steps.start, steps.start + steps.n
        per_effect = self._kind_codes(fresh)
        metas = [e.meta or EMPTY_META for e in fresh]  # effects lo..hi's
        codes = steps.spread(per_effect, K_EPISODE)
        results = list(map(attrgetter("result"), fresh))
        tl.results.extend(results)
        t_in = steps.spread(columns.ints(ctx.tokens_in[lo:hi]))
        t_out = steps.spread(columns.ints(ctx.tokens_out[lo:hi]))
        costs, offline, known = self._costs(codes, steps, metas, (t_in, t_out))
        put(tl.effect_of, steps.effect_of)
        put(tl.episode_of, episode_of)
        put(tl.kind, codes)
        put(tl.depth, steps.spread(columns.depths(fresh)))
        put(tl.agent, columns.agent_ids(metas, steps, self._label, self._agent_ids))
        put(tl.tokens_in, t_in)
        put(tl.tokens_out, t_out)
        last_tokens = tl.cum_tokens[-1] if len(tl.cum_tokens) else 0
        last_cost = tl.cum_cost[-1] if len(tl.cum_cost) else 0.0
        put(tl.cum_tokens, columns.running(t_in + t_out, last_tokens))
        put(tl.cost, costs)
        put(tl.offline, offline)
        tl.offline_steps += int(offline.sum())
        put(tl.cum_cost, columns.running(np.where(np.isnan(costs), 0.0, costs), last_cost))
        put(tl.flags, steps.spread(columns.flags(results, per_effect, K_TOOL, result_flags)))
        tl.call_of.extend(array("i", [-1]) * len(codes))  # _pairs fills them in
        put(tl.size, columns.sizes(results, steps, episode_of, doc.episodes))
        tl.cost_known = tl.cost_known and known
        tl.input_tokens += int(t_in.sum())
        tl.output_tokens += int(t_out.sum())


def build_timeline(doc: Document) -> Timeline:
    """The whole timeline of a finished document, shield decisions placed."""
    return TimelineBuilder(doc).finish()


def _finished(tl: Timeline) -> Timeline:
    """A finished run's shield decisions, placed on its model steps."""
    doc = tl.doc
    if doc.shield_events:
        model_steps = np.flatnonzero(np.frombuffer(bytes(tl.kind), dtype=np.uint8) == K_MODEL)
        tl.shield_at = place_shield_events(doc, tl, model_steps.tolist())
    for step, events in tl.shield_at.items():
        tl.flags[step] |= F_SHIELD
        if any(doc.shield_events[e].action == "deny" for e in events):
            tl.flags[step] |= F_DENIED
    return tl


def _pairs(tl: Timeline, ctx: ContextIndex, effects: range) -> None:
    """Link the results among ``effects`` to the model steps that called them.

    A long range (a whole run) is linked with numpy over the range's callers; a live
    tail's few new effects look theirs up one by one, so its cost does not grow with the run.
    """
    caller = ctx.caller
    if len(effects) < 64:
        for result_eff in effects:
            call_eff = caller[result_eff]
            if call_eff >= 0:
                tl.call_of[tl.step_of_effect[result_eff]] = tl.step_of_effect[call_eff]
        return
    calls = np.frombuffer(caller, dtype=np.intc)[effects.start : effects.stop].astype(np.int64)
    take = np.flatnonzero(calls >= 0)
    if not len(take):
        return
    step_of = np.frombuffer(tl.step_of_effect, dtype=np.intc)
    call_of = np.frombuffer(tl.call_of, dtype=np.intc)
    call_of[step_of[take + effects.start]] = step_of[calls[take]]
    del step_of, call_of  # (the arrays must not stay exported: a live run grows them)


def _mark_unfinished(tl: Timeline, first_new: int, unfinished: bool) -> None:
    """Only the last step carries the "ends inside an effect" flag (paused or crashed)."""
    if first_new > 0:
        tl.flags[first_new - 1] &= ~F_UNFINISHED & 0xFF
    if unfinished and len(tl):
        tl.flags[len(tl) - 1] |= F_UNFINISHED
