"""The request side of a recorded exchange: what its history items contribute (§6.3, §6.4).

Why apart from :mod:`.wire`: the scan reads a request through :class:`RequestView`,
so the recording proxy can hand it a request it never decoded whole (members and
history items as raw JSON, decoded on use: ``loom_core.proxy.rawreq``) and let it
start at the first history item the conversation's previous request did not hold --
those were scanned when that request was recorded, and a scan only ever adds what it
has not seen. Converting a wirelog or a sidecar hands it plain dicts
(:class:`DictView`) and scans every item, with the same result.

:func:`scan` yields, in history order, what :class:`.wire.WireRecorder` records:
``("tool", id, content)`` for a tool result, ``("episode", text, None)`` for a user
prompt, ``("name", call_id, name)`` for a Responses API call replayed in the
history, ``("system", index, text)`` for a system (or developer) message of the
OpenAI dialects.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice
from typing import Any, Protocol

from loom_core.formats.wire_response import responses_call

_REMINDER = re.compile(r"^\s*<(system-reminder|environment_details|context)\b", re.IGNORECASE)
# Responses API agents (Codex) send their environment/instructions as user messages
# wrapped in one tag; such a message is context, not something the user asked.
_WRAPPED = re.compile(
    r"^\s*<(environment_context|user_instructions|system-reminder|"
    r"environment_details|context)\b[\s\S]*>\s*$",
    re.IGNORECASE,
)
Found = tuple[str, Any, Any]  # (what, and its two values; see the module docstring)


class RequestView(Protocol):
    """A request as the recorder reads it: members by name, history items from an index."""

    hist: str | None  # "messages" or "input" when that member is a list, else None

    def get(self, key: str, default: Any = None) -> Any: ...

    def count(self) -> int: ...  # history items

    def history(self, start: int = 0) -> Iterator[Any]: ...


class DictView:
    """A decoded request (a dict) as a :class:`RequestView`."""

    __slots__ = ("request", "hist")

    def __init__(self, request: dict[str, Any]) -> None:
        self.request = request
        self.hist = next(
            (m for m in ("messages", "input") if isinstance(request.get(m), list)), None
        )

    def get(self, key: str, default: Any = None) -> Any:
        return self.request.get(key, default)

    def count(self) -> int:
        return len(self.request[self.hist]) if self.hist else 0

    def history(self, start: int = 0) -> Iterator[Any]:
        return islice(self.request[self.hist], start, None) if self.hist else iter(())


def flatten(content: Any) -> str:
    """Text of a content value: a string, or the concatenated ``text`` of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and isinstance(b.get("text", ""), str)
        )
    return ""


def episode_of(content: Any) -> str:
    """The user text a message contributes (§6.4): reminders dropped unless all are."""
    if isinstance(content, str):
        return content
    texts = [
        b.get("text") or ""
        for b in content or []  # input_text: Responses API parts
        if isinstance(b, dict) and b.get("type") in ("text", "input_text") and b.get("text")
    ]
    kept = [t for t in texts if not _REMINDER.match(t)] or texts
    return kept[-1] if kept else ""


def tool_names(request: RequestView, dialect: str) -> list[str]:
    """The sorted names of the tools offered (as the request spells them)."""
    tools = request.get("tools") or []
    if dialect == "responses":  # flat function tools; built-in tools only have a type
        return sorted(
            str(t.get("name") or t.get("type") or "") for t in tools if isinstance(t, dict)
        )
    return sorted((t.get("function") or t).get("name", "") for t in tools if isinstance(t, dict))


def message_count(request: RequestView, dialect: str) -> int:
    """``meta.msgs``: the history's length (a Responses string input counts one)."""
    member = "input" if dialect == "responses" else "messages"
    if request.hist == member:
        return request.count()
    if dialect == "responses":
        return int(bool(request.get("input")))
    return len(request.get("messages") or [])


def scan(request: RequestView, dialect: str, start: int = 0) -> Iterator[Found]:
    """What the history items from ``start`` on contribute (see the module docstring)."""
    if dialect == "responses":
        return _scan_responses(request, start)
    if request.hist != "messages":
        return iter(())
    return _scan_messages(request.history(start), dialect == "openai", start)


def _scan_messages(items: Iterator[Any], openai: bool, start: int) -> Iterator[Found]:
    for i, msg in enumerate(items, start):
        if not isinstance(msg, dict):
            continue
        role, content = msg.get("role"), msg.get("content")
        if openai and role in ("system", "developer"):
            yield "system", i, flatten(content)
        elif openai and role == "tool":
            yield "tool", msg.get("tool_call_id") or "", content
        elif role == "user":
            if not openai and isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        yield "tool", block.get("tool_use_id") or "", block.get("content")
            yield "episode", flatten(content) if openai else episode_of(content), None


def _scan_responses(request: RequestView, start: int) -> Iterator[Found]:
    """Responses API request: ``input`` (a string or a list of items)."""
    if request.hist == "input":
        items: Iterator[Any] = request.history(start)
    else:
        text = request.get("input")
        items = iter([{"role": "user", "content": text}] if isinstance(text, str) else [])
    for i, item in enumerate(items, start):
        if not isinstance(item, dict):
            continue
        kind, role = str(item.get("type") or "message"), item.get("role")
        if kind.endswith("_call_output"):
            yield "tool", str(item.get("call_id") or ""), item.get("output")
        elif kind.endswith("_call") and item.get("call_id"):  # replayed history
            yield "name", str(item["call_id"]), responses_call(item)["name"]
        elif kind == "message" and role in ("system", "developer"):
            yield "system", i, flatten(item.get("content"))
        elif kind == "message" and role == "user":
            text = episode_of(item.get("content"))
            if not _WRAPPED.match(text):
                yield "episode", text, None
