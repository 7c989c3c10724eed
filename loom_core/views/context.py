"""Reconstruct what the model saw at every model step (loom-format.md §1.3-1.5, §3.2, §6.3).

Traces do not store requests, so the context is rebuilt from the log the way the
recording agent built it: per agent a list of items (user episodes, the clock
line, assistant turns, tool results, a sub-agent's answer) that only grows,
except when compaction or a fork edit replaces it. A model step's *frame* is
then just (that list, its length at the call): O(1) to store, O(1) to find the
*delta* against the previous call of the same agent, and nothing per step that
grows with the trace. :mod:`loom_core.views.frames` turns a frame into messages.
"""

from __future__ import annotations

import weakref
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

import msgspec

from loom_core.formats.document import EMPTY_META, Document, decode_raw, text_and_calls
from loom_core.formats.fastschema import fast_struct, list_of
from loom_core.formats.structs import FastModelResult as ModelResult
from loom_core.formats.structs import FastToolCall as ToolCall
from loom_core.formats.structs import FastUsage as Usage
from loom_core.views.items import Item, ItemList
from loom_core.views.pairs import ResultPairs

# The usage members that make a call's price more than input and output counts (cache,
# reasoning, OpenAI's names): any of them sends the call down the full pricing path.
_DETAIL_KEYS = (
    "prompt_tokens",
    "completion_tokens",
    "prompt_tokens_details",
    "completion_tokens_details",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation",
    "input_tokens_details",
    "output_tokens_details",
)


def _marked(base: Any, name: str, extra: tuple[str, ...]) -> Any:
    """``base`` (a derived struct) with raw ``extra`` members that default to absent."""
    fields: list[Any] = [(f.name, f.type, f.default) for f in msgspec.structs.fields(base)]
    fields += [(key, msgspec.Raw, None) for key in extra]
    return msgspec.defstruct(name, fields, kw_only=True, gc=False, module=__name__)


# model results for indexing: usage and tool call ids/names typed; the usage also says
# whether it holds more than input and output counts (see plain_usage). The texts and
# a call's input are not members here: skipped, not kept as raw views (a sixth less of
# the walk's decode). Every member the views type is still checked: a result they read
# as empty (a wrong ``stop_reason``, a call that is not an object) the walk does too.
_IndexUsage = _marked(fast_struct(Usage), "IndexUsage", _DETAIL_KEYS)
_INDEX_FIELDS = frozenset({"id", "name", "tool_calls", "stop_reason", "usage"})
_IndexCall = msgspec.defstruct(
    "IndexToolCall",
    [
        (f.name, f.type, f.default)
        for f in msgspec.structs.fields(ToolCall)
        if f.name in _INDEX_FIELDS
    ],
    kw_only=True,
    gc=False,
    module=__name__,
)
_INDEX_TYPES = {"usage": _IndexUsage | None, "tool_calls": list_of(_IndexCall) | None}
_IndexResult = msgspec.defstruct(
    "IndexModelResult",
    [
        (f.name, _INDEX_TYPES.get(f.name, f.type), f.default)
        for f in msgspec.structs.fields(ModelResult)
        if f.name in _INDEX_FIELDS
    ],
    kw_only=True,
    gc=False,
    module=__name__,
)
_index_result = msgspec.json.Decoder(_IndexResult)
_index_usage = msgspec.json.Decoder(_IndexUsage)


@dataclass(eq=False)
class AgentContext:
    """One agent invocation's growing list of context items."""

    agent: str
    depth: int
    items: ItemList  # (see loom_core.views.items: read back as Item tuples)
    pending: list[tuple[str, str, int]] = field(
        default_factory=list
    )  # (call_id, name, model effect), call order
    last_model: int = -1
    awaiting_episode: bool = False
    sys_hash: str | None = None
    delegation: tuple[str, str] = ("", "")  # (call id, tool name) that started a sub-agent
    tool_names: set[str] = field(default_factory=set)  # every tool this agent called
    cid: int = -1  # position in ContextIndex.contexts once a frame refers to it


@dataclass
class ContextIndex:
    """Frames, pairs and decoded per-effect facts the timeline needs.

    Per-effect facts are flat arrays (a few bytes per effect, not a dict entry
    and a tuple each): a 100,000-effect run must fit in little more than its file.
    """

    doc: Document
    tokens_in: array[int] = field(default_factory=lambda: array("q"))
    tokens_out: array[int] = field(default_factory=lambda: array("q"))
    contexts: list[AgentContext] = field(default_factory=list)
    frame_ctx: array[int] = field(default_factory=lambda: array("i"))  # -1: not a model effect
    frame_len: array[int] = field(default_factory=lambda: array("i"))
    prev_model: array[int] = field(default_factory=lambda: array("i"))  # -1: first call
    # 1: a model call whose usage holds only input and output counts, both >= 0 (its
    # price needs nothing but tokens_in/tokens_out: see RunPricer.costs)
    plain_usage: array[int] = field(default_factory=lambda: array("B"))
    # tool eff -> the model eff whose call it answers, -1: none (read as result_pairs)
    caller: array[int] = field(default_factory=lambda: array("i"))
    # edit effect -> (the agent's list it replaced, the edited list): what a fork changed
    edits: dict[int, tuple[AgentContext, AgentContext]] = field(default_factory=dict)
    episode_before: dict[int, list[int]] = field(default_factory=dict)
    # effects other than model calls that carry a call's usage (see ContextWalker.extend)
    billed: set[int] = field(default_factory=set)

    @property
    def result_pairs(self) -> ResultPairs:
        """{tool result effect: the model effect whose call it answers}, in effect order."""
        return ResultPairs(self.caller)

    def meta_of(self, i: int) -> Any:
        """Effect ``i``'s typed meta (never None), read from the effect: a big run's
        effects are decoded when asked for (:mod:`loom_core.formats.lazy_effects`), so
        nothing per effect is kept here."""
        return self.doc.effects[i].meta or EMPTY_META

    def frame_of(self, i: int) -> tuple[AgentContext, int] | None:
        """(the agent's item list owner, its length at the call) for a model effect."""
        c = self.frame_ctx[i]
        return None if c < 0 else (self.contexts[c], self.frame_len[i])


_MAX_TOKENS = 10**12  # per call: bounds absurd hand-edited counts so sums fit int64 arrays


def _tokens(value: Any) -> int:
    if type(value) is int and 0 <= value <= _MAX_TOKENS:  # the usual count, first
        return value
    n = int(value or 0)
    return n if -_MAX_TOKENS <= n <= _MAX_TOKENS else max(-_MAX_TOKENS, min(n, _MAX_TOKENS))


_details_of = attrgetter(*_DETAIL_KEYS)
_NO_DETAILS = (None,) * len(_DETAIL_KEYS)


def _plain(usage: Any) -> bool:
    """No member that prices a call beyond its input and output counts."""
    return bool(_details_of(usage) == _NO_DETAILS)


def _index(raw: Any) -> Any:
    """Usage and calls of a model result; an unreadable result reads as empty (§1.4)."""
    try:
        return _index_result.decode(raw) if raw is not None else None
    except msgspec.ValidationError:
        return None


class _Builder:
    """Walks the log once, keeping a stack of agent contexts."""

    def step(self, i: int, eff: Any, meta: Any) -> None:
        """Take effect ``i`` (its typed struct and meta) into the contexts; per format."""
        raise NotImplementedError

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.index = ContextIndex(doc=doc)
        self.episodes = doc.episodes
        self.next_episode = 0
        self.stack: list[AgentContext] = []
        self.by_agent: dict[str, AgentContext] = {}
        self.call_owner: dict[str, tuple[AgentContext, int]] = {}

    # -- tokens ---------------------------------------------------------------
    def billed(self, i: int, raw: msgspec.Raw) -> None:
        """Tokens of a step that is not a model call but stands for one (``meta.usage``,
        :mod:`loom_core.views.billed`): counted like a model call's, never read as one."""
        index = self.index
        try:
            usage = _index_usage.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return  # not an object: shown raw in the step's JSON, not counted
        self.count(i, usage)
        index.billed.add(i)

    def count(self, i: int, usage: Any) -> None:
        """Effect ``i``'s input and output tokens, and whether its price needs more."""
        index = self.index
        t_in = index.tokens_in[i] = _tokens(usage.input_tokens)
        t_out = index.tokens_out[i] = _tokens(usage.output_tokens)
        index.plain_usage[i] = t_in >= 0 and t_out >= 0 and _plain(usage)

    # -- episodes -------------------------------------------------------------
    def take_episode(self, ctx: AgentContext, before: int) -> None:
        if self.next_episode >= len(self.episodes):
            return
        ep = self.next_episode
        self.next_episode += 1
        self.index.episode_before.setdefault(before, []).append(ep)
        ctx.items.append(("episode", ep, "", ""))

    # -- model calls ----------------------------------------------------------
    def model(self, i: int, eff: Any, ctx: AgentContext) -> None:
        index = self.index
        value = _index(eff.result)
        calls: Sequence[Any] = ()  # the result's typed tool calls
        if value is not None:
            usage = value.usage
            if usage is not None:
                self.count(i, usage)
            else:
                index.plain_usage[i] = 1
            calls = value.tool_calls or ()
        if (ctx.awaiting_episode or not ctx.items) and ctx.depth == 0:
            self.take_episode(ctx, i)
        cid = ctx.cid
        if cid < 0:
            cid = ctx.cid = len(index.contexts)
            index.contexts.append(ctx)
        index.frame_ctx[i] = cid
        index.frame_len[i] = len(ctx.items)
        index.prev_model[i] = ctx.last_model
        ctx.last_model = i
        ctx.items.add_assistant(i)
        pending: list[tuple[str, str, int]] = []
        ctx.pending = pending
        for c in calls:
            name = c.name or ""
            pending.append((c.id or "", name, i))
            ctx.tool_names.add(name)
        ctx.awaiting_episode = not calls

    def new_context(self, agent: str, depth: int, **kw: Any) -> AgentContext:
        """An agent's context with an empty item list."""
        return AgentContext(agent, depth, ItemList(self.doc.effects), **kw)

    def replace(self, ctx: AgentContext, items: list[Item]) -> AgentContext:
        """Compaction or an edit replaced the context: start a new list (old frames keep theirs)."""
        return AgentContext(
            ctx.agent,
            ctx.depth,
            ItemList(self.doc.effects, items),
            ctx.pending,
            ctx.last_model,
            ctx.awaiting_episode,
            ctx.sys_hash,
            ctx.delegation,
            ctx.tool_names,
        )


def _clock_line(ts: Any) -> str | None:
    if not isinstance(ts, (int, float)):
        return None
    try:
        stamp = datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):  # a hand-edited time far out of range
        return None
    return f"Current datetime: {stamp}"


class _HarnessBuilder(_Builder):
    """Harness traces: depth gives the sub-agent stack; tool results pair FIFO by name."""

    def ensure_depth(self, depth: int, agent: str) -> AgentContext:
        if not self.stack:
            self.stack.append(self.new_context(agent or "agent", 0))
        while len(self.stack) - 1 > depth:
            child = self.stack.pop()
            parent = self.stack[-1]
            parent.items.append(("child", child.last_model, *child.delegation))
        while len(self.stack) - 1 < depth:
            parent = self.stack[-1]
            call = parent.pending.pop(0) if parent.pending else ("", "", -1)
            child = self.new_context(agent, len(self.stack), delegation=(call[0], call[1]))
            task = self.task_of(call[2], call[0])
            child.items.append(("text", task, "task", "user"))
            self.stack.append(child)
        return self.stack[-1]

    def task_of(self, model_eff: int, call_id: str) -> str:
        if model_eff < 0:
            return ""
        value = decode_raw(self.doc.effects[model_eff].result)
        for c in text_and_calls(value)[1]:
            if isinstance(c, dict) and c.get("id") == call_id:
                inp = c["input"] if isinstance(c.get("input"), dict) else {}
                # loom-harness's as_tool() input names it "task"; Claude Code's Task/Agent
                # tool (a foreign run read by formats/claude_code) names it "prompt"
                return str(inp.get("task", inp.get("prompt", "")))
        return ""

    def tool_result(self, i: int, ctx: AgentContext, name: str) -> None:
        pending = ctx.pending
        if pending and pending[0][1] == name:  # the usual case: results in call order
            match: tuple[str, str, int] | None = pending[0]
        else:
            match = next((c for c in pending if c[1] == name), None)
        if match is not None:
            ctx.pending.remove(match)
            self.index.caller[i] = match[2]
        ctx.items.add_tool(i, match[0] if match else "")

    def step(self, i: int, eff: Any, meta: Any) -> None:
        kind = eff.kind or ""
        depth = eff.depth or 0
        stack = self.stack
        if not 0 <= depth <= len(stack):  # malformed: negative, or a jump of several levels
            depth = min(max(depth, 0), len(stack))
        ctx = stack[-1] if len(stack) - 1 == depth else self.ensure_depth(depth, meta.agent or "")
        if ctx.agent == "agent" and meta.agent:
            ctx.agent = meta.agent
        if kind == "model":
            self.model(i, eff, ctx)
        elif kind.startswith("tool:"):
            self.tool_result(i, ctx, kind[5:])
        elif kind == "human":
            ask = next((c for c in ctx.pending if c[1] == "ask_human"), None)
            if ask is not None:
                ctx.pending.remove(ask)
                self.index.caller[i] = ask[2]
                ctx.items.add_tool(i, ask[0], human=True)
        elif kind == "time" and not ctx.items:
            line = _clock_line(decode_raw(eff.result))
            if line:
                ctx.items.append(("text", line, "clock", "user"))
            self.take_episode(ctx, i)
        elif kind == "memory":
            ctx.items.add_memory(i)
        elif kind == "compact":
            self.compact(i, ctx)
        elif kind == "edit":
            edited = self.stack[-1] = self.replace(ctx, _snapshot_items(eff))
            self.index.edits[i] = (ctx, edited)

    def compact(self, i: int, ctx: AgentContext, keep: int = 4) -> None:
        tail = ctx.items[-keep:]
        while tail and tail[0][0] in ("tool", "child"):
            tail = tail[1:]
        # like the harness, pinned items of the dropped part stay: earlier summaries
        # (and snapshot items an edit marked pinned), ahead of the new summary
        head = ctx.items[: len(ctx.items) - len(tail)]
        pinned = [
            it
            for it in head
            if (it[0] == "text" and it[2] == "compaction")
            or (it[0] == "snapshot" and it[1].get("pinned"))
        ]
        summary = decode_raw(self.doc.effects[i].result) if self.doc.effects[i].result else ""
        items = [
            *pinned,
            ("text", f"Summary of earlier conversation: {summary}", "compaction", "user"),
            *tail,
        ]
        self.stack[-1] = self.replace(ctx, items)


def _snapshot_items(eff: Any) -> list[Item]:
    """An ``edit`` effect's context snapshot as items (a hand-edited non-list: empty)."""
    snap = decode_raw(eff.result)
    snap = snap if isinstance(snap, list) else []
    return [("snapshot", d, "", "") for d in snap if isinstance(d, dict)]


class _ProxyBuilder(_Builder):
    """Proxy traces: agents by system-prompt hash; results pair by ``meta.tuid``.

    A fork branch's ``edit`` effect (no agent in its meta) replaces the context of
    whichever agent makes the next model call: the fork point's.
    """

    edit: list[Item] | None = None
    edit_at = -1  # the pending edit's effect

    def step(self, i: int, eff: Any, meta: Any) -> None:
        kind = eff.kind or ""
        if kind == "model":
            key = meta.sys_hash or ""
            ctx = self.by_agent.get(key)
            if ctx is None:
                ctx = self.by_agent[key] = self.new_context(key, 0, sys_hash=key)
            if self.edit is not None:
                edited = self.by_agent[key] = self.replace(ctx, self.edit)
                self.index.edits[self.edit_at] = (ctx, edited)
                ctx = edited
                ctx.awaiting_episode, self.edit = False, None
            elif not ctx.items or ctx.awaiting_episode:
                self.take_episode(ctx, i)
                ctx.awaiting_episode = False
            self.model(i, eff, ctx)
        elif kind == "edit":
            self.edit, self.edit_at = _snapshot_items(eff), i
        elif kind.startswith("tool:"):
            tuid = meta.tuid or ""
            owner = self.call_owner.get(tuid)
            if owner is not None:
                ctx, model_eff = owner
                self.index.caller[i] = model_eff
                ctx.items.add_tool(i, tuid)

    def model(self, i: int, eff: Any, ctx: AgentContext) -> None:
        ctx.awaiting_episode = False
        super().model(i, eff, ctx)
        for cid, _name, _eff in ctx.pending:
            self.call_owner[cid] = (ctx, i)


class ContextWalker:
    """Walks the log incrementally: :meth:`extend` indexes effects appended since the last call.

    A finished document is walked once (:func:`build_context`); a live journal calls
    :meth:`extend` as lines arrive, so a growing run is never re-walked from the start.
    """

    def __init__(self, doc: Document) -> None:
        self.builder: _Builder = _ProxyBuilder(doc) if doc.is_proxy else _HarnessBuilder(doc)
        self.doc = doc
        self.done = 0

    @property
    def index(self) -> ContextIndex:
        return self.builder.index

    def _grow(self, n: int) -> None:
        index = self.index
        index.tokens_in.extend(array("q", [0]) * n)
        index.tokens_out.extend(array("q", [0]) * n)
        index.frame_ctx.extend(array("i", [-1]) * n)
        index.frame_len.extend(array("i", [0]) * n)
        index.prev_model.extend(array("i", [-1]) * n)
        index.caller.extend(array("i", [-1]) * n)
        index.plain_usage.extend(array("B", [0]) * n)

    def extend(self, upto: int | None = None) -> range:
        """Index effects ``done .. upto`` (default: all there are); returns that range."""
        effects = self.doc.effects
        end = len(effects) if upto is None else min(upto, len(effects))
        start = self.done
        if end <= start:
            return range(start, start)
        self._grow(end - start)
        step, billed = self.builder.step, self.builder.billed
        for i, eff in enumerate(effects[start:end], start):  # one slice: a lazy run's too
            meta = eff.meta or EMPTY_META
            step(i, eff, meta)
            if meta.usage is not None and eff.kind != "model":
                billed(i, meta.usage)
        self.done = end
        return range(start, end)

    def finish(self) -> None:
        """A finished log: place episode 0 first when no effect ever started it."""
        index, builder = self.index, self.builder
        if not self.doc.effects and self.doc.episodes:
            index.episode_before.setdefault(0, []).append(0)
        elif builder.next_episode == 0 and self.doc.episodes:
            index.episode_before.setdefault(0, []).insert(0, 0)


def build_context(doc: Document) -> ContextIndex:
    """Walk the whole log once and index frames, pairs, usage and episodes."""
    walker = ContextWalker(doc)
    walker.extend()
    walker.finish()
    return walker.index


_WALK = "context_index"  # the key of a document's whole walk in ``Document.derived``


def context_index(doc: Document) -> ContextIndex:
    """``build_context(doc)``, built once per document and kept with it (``doc.derived``):
    a fork walks the log for the frame, the prefix's episodes and the dry run, and a big
    trace should be walked once. The window's timeline leaves its own walk there
    (:func:`keep_walk`), so a fork from a tab walks nothing again."""
    kept = doc.derived.get(_WALK)
    found = kept() if isinstance(kept, weakref.ref) else kept
    if found is None or len(found.frame_ctx) != len(doc.effects):  # none, or a live run grew
        found = doc.derived[_WALK] = build_context(doc)  # (a cycle the collector frees)
    return found


def keep_walk(doc: Document, index: ContextIndex) -> None:
    """Offer ``index``, a whole walk of ``doc`` (a finished timeline's), to
    :func:`context_index` for as long as the timeline keeps it: held weakly, since the
    walk refers to its document and a strong hold would make every loaded run a
    reference cycle, freed by the collector instead of when its last reference goes
    (and the window freezes the collector's generations while runs are open)."""
    doc.derived[_WALK] = weakref.ref(index)
