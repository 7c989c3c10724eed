"""Context frames: the system prompt, tools and messages a model saw at one call.

A frame is a view over an agent's item list (see :mod:`loom_core.views.context`):
messages are materialised one at a time, so a view can show the new ones and the
last few without touching the thousands before them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import msgspec

from loom_core.formats.document import text_and_calls
from loom_core.views.context import AgentContext, ContextIndex
from loom_core.views.items import Item

_generic = msgspec.json.Decoder()


@dataclass(frozen=True)
class Message:
    """One message of a frame, in the neutral shape loom-harness hands providers."""

    role: str  # user | assistant | tool
    text: str
    source: str  # episode, clock, task, compaction, memory, edit, assistant, tool, subagent
    effect: int | None = None  # the effect that produced it, when there is one
    tool_calls: tuple[dict[str, Any], ...] = ()
    call_id: str = ""
    name: str = ""
    raw_result: Any = None  # tool results: the value as recorded (may not be a string)


def result_text(value: Any) -> str:
    """A tool result as text for display: strings as is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass
class Frame:
    """What the model saw at model effect ``effect``."""

    index: ContextIndex
    effect: int
    ctx: AgentContext
    n: int
    new_from: int  # messages[new_from:] are new since the agent's previous call
    prev_effect: int | None
    rewritten: bool  # the previous call saw a different (compacted/edited) list
    _cache: dict[int, Message] = field(default_factory=dict)

    def __len__(self) -> int:
        return self.n

    @property
    def agent(self) -> str:
        return self.ctx.agent

    def message(self, k: int) -> Message:
        """Materialise message ``k`` (0 <= k < len)."""
        if k not in self._cache:
            self._cache[k] = _materialise(self.index, self.ctx.items[k])
        return self._cache[k]

    def messages(self, start: int = 0, stop: int | None = None) -> list[Message]:
        stop = self.n if stop is None else min(stop, self.n)
        return [self.message(k) for k in range(max(0, start), stop)]

    # -- system and tools -----------------------------------------------------
    def system(self) -> tuple[str, bool]:
        """(system prompt, complete?) — only its head is known when ``systems`` lacks it."""
        doc = self.index.doc
        meta = self.index.meta_of(self.effect)
        sys_hash = meta.sys_hash
        systems = doc.systems
        if sys_hash and sys_hash in systems:
            return systems[sys_hash], True
        if self.ctx.depth == 0 and not doc.is_proxy and doc.header.system is not None:
            return doc.header.system, True
        head = meta.sys_head
        if isinstance(head, str):
            return head, len(head) < 160
        return "", False

    def tools(self) -> tuple[list[str], bool]:
        """(tool names, offered?) — offered when recorded (proxy), else the ones seen in use."""
        meta = self.index.meta_of(self.effect)
        if meta.tools is not None:
            return list(meta.tools), True
        return sorted(self.ctx.tool_names), False


def _materialise(index: ContextIndex, item: Item) -> Message:
    source, ref, call_id, name = item
    doc = index.doc
    if source == "episode":
        return Message("user", doc.episodes[ref], "episode")
    if source == "text":
        return Message(name or "user", ref, call_id)
    if source == "assistant":
        text, calls = text_and_calls(doc.result(ref))
        return Message("assistant", text, "assistant", ref, tuple(calls))
    if source in ("tool", "memory"):
        value = doc.result(ref)
        role = "user" if source == "memory" else "tool"
        return Message(role, result_text(value), source, ref, (), call_id, name, value)
    if source == "child":
        text = text_and_calls(doc.result(ref))[0] if ref >= 0 else ""
        return Message("tool", text, "subagent", ref if ref >= 0 else None, (), call_id, name, text)
    if source == "snapshot":
        snap_calls = text_and_calls({"tool_calls": ref.get("tool_calls")})[1]
        content = str(ref.get("content") or "")  # also the raw result: what the model saw
        return Message(
            str(ref.get("role") or "user"),
            content,
            "edit",
            None,
            tuple(snap_calls),
            str(ref.get("tool_call_id") or ""),
            str(ref.get("name") or ""),
            content,
        )
    raise ValueError(f"unknown context item {source!r}")


def message_of(index: ContextIndex, item: Item) -> Message:
    """One context item as a message, as a frame shows it (also for lists no frame shows)."""
    return _materialise(index, item)


def frame_at(index: ContextIndex, effect: int) -> Frame | None:
    """The frame of model effect ``effect`` (``None`` for other effects)."""
    found = index.frame_of(effect)
    if found is None:
        return None
    ctx, n = found
    prev: int | None = index.prev_model[effect]
    new_from, rewritten = 0, False
    if prev is None or prev < 0:
        prev = None
    else:
        prev_frame = index.frame_of(prev)
        assert prev_frame is not None  # prev_model only names model effects, which have frames
        prev_ctx, prev_n = prev_frame
        if prev_ctx is ctx:
            new_from = min(prev_n, n)
        else:
            rewritten = True
    return Frame(index, effect, ctx, n, new_from, prev, rewritten)


def neutral_messages(frame: Frame) -> list[dict[str, Any]]:
    """The frame as loom-harness's provider-neutral message list (§3.2).

    Assistant ``tool_calls`` are rendered the way the harness's key hashing sees
    them (Python ``repr`` of its ToolCall objects), and tool contents are
    ``str()`` of the result, so recomputing a harness model key from this list
    reproduces the recorded key when the tool schemas are known.
    """
    out: list[dict[str, Any]] = []
    for m in frame.messages():
        if m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.text}
            if m.tool_calls:
                msg["tool_calls"] = [
                    f"ToolCall(id={c.get('id')!r}, name={c.get('name')!r}, input={c.get('input')!r})"
                    for c in m.tool_calls
                ]
            out.append(msg)
        elif m.role == "tool":
            content = m.raw_result if m.source != "subagent" else m.text
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": m.call_id,
                    "name": m.name,
                    "content": content if isinstance(content, str) else str(content),
                }
            )
        else:
            out.append({"role": "user", "content": m.text})
    return out
