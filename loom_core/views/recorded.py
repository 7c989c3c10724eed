"""What a foreign producer recorded itself: the exact messages a call was sent, the source record.

Why: a loom trace lets us rebuild each call's context from the effects before it, but an
OpenTelemetry span or an Inspect model event carries the input exactly as it was sent. When a
reader keeps it (``Document.extra["inputs"]``, see :mod:`loom_core.formats.foreign`) the
context view shows that instead of a reconstruction; when the producer captured no content at
all (``extra["content_recorded"] is False``) the view says so rather than show an empty list.
Every value here came from someone else's file, so any JSON shape is accepted.
"""

from __future__ import annotations

import json
from typing import Any

from loom_core.formats.document import Document
from loom_core.views.frames import Message

_TEXT_KEYS = ("text", "content", "value", "result", "output")
_CALL_TYPES = ("tool_call", "tool_use", "function_call")
_RESULT_TYPES = ("tool_call_response", "tool_result", "function_call_output")
_LOOK_BACK = 2000  # effects searched for the previous call: a cursor move stays O(1) in run length


def _seq(doc: Document, effect: int) -> int:
    seq = getattr(doc.effects[effect], "seq", effect)
    return seq if isinstance(seq, int) else effect


def _lookup(table: Any, seq: int) -> Any:
    """``table[seq]`` where the reader's keys may be ints or (after JSON) strings."""
    if not isinstance(table, dict):
        return None
    return table.get(seq, table.get(str(seq)))


def content_missing(doc: Document) -> bool:
    """The producer recorded no message content (e.g. OpenTelemetry with capture off)."""
    return doc.extra.get("content_recorded") is False


def source_record(doc: Document, effect: int) -> Any:
    """The source record a foreign reader kept for ``effect`` (None when there is none)."""
    return _lookup(doc.extra.get("records"), _seq(doc, effect))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str)


def _part_text(part: Any) -> str:
    if not isinstance(part, dict):
        return _text(part)
    for key in _TEXT_KEYS:
        if key in part:
            return _part_text(part[key]) if isinstance(part[key], list) else _text(part[key])
    return _text(part)


def _call(part: dict[str, Any]) -> dict[str, Any]:
    function = part.get("function")
    fn: dict[str, Any] = function if isinstance(function, dict) else part
    args = fn.get("arguments", fn.get("input", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            pass
    # Inspect AI names the function in a string member ``function`` beside ``arguments``
    name = fn.get("name", function if isinstance(function, str) else "")
    return {"id": _text(part.get("id", "")), "name": _text(name), "input": args}


def _message(raw: Any, effect: int) -> Message:
    """One recorded message in the neutral shape the context view draws."""
    if not isinstance(raw, dict):
        return Message(role="?", text=_text(raw), source="recorded", effect=effect)
    role = _text(raw.get("role", "?")) or "?"
    content = raw.get("content", raw.get("parts"))
    parts = content if isinstance(content, list) else [content] if content is not None else []
    texts: list[str] = []
    calls = [_call(c) for c in raw.get("tool_calls") or [] if isinstance(c, dict)]
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _CALL_TYPES and isinstance(part, dict):
            calls.append(_call(part))
        elif kind in _RESULT_TYPES:
            role = "tool" if role in ("user", "?") else role
            texts.append(_part_text(part))
        else:
            texts.append(_part_text(part))
    error = raw.get("error")  # Inspect AI keeps a failed tool call's error beside its content
    if isinstance(error, dict) and error.get("message"):
        texts.append(f"ERROR: {_text(error.get('type', ''))}: {_text(error['message'])}")
    return Message(
        role=role,
        text="\n".join(t for t in texts if t),
        source="recorded",
        effect=effect,
        tool_calls=tuple(calls),
        call_id=_text(raw.get("tool_call_id", "")),
        name=_text(raw.get("name", raw.get("function", ""))),
    )


def recorded_messages(doc: Document, effect: int) -> list[Message] | None:
    """The messages model effect ``effect`` was sent, as its producer recorded them."""
    raw = _lookup(doc.extra.get("inputs"), _seq(doc, effect))
    if not isinstance(raw, list):
        return None
    return [_message(m, effect) for m in raw]


def new_from(doc: Document, effect: int, messages: list[Message]) -> int:
    """How many of ``messages`` the same agent's previous recorded call was also sent.

    The previous call is the nearest earlier model effect at the same depth with recorded
    inputs; when its list is not a prefix of this one (compaction, a rewrite) nothing is
    counted as old, so no message is wrongly shown as already seen.
    """
    depth = getattr(doc.effects[effect], "depth", 0)
    for j in range(effect - 1, max(-1, effect - 1 - _LOOK_BACK), -1):
        eff = doc.effects[j]
        if getattr(eff, "kind", "") != "model" or getattr(eff, "depth", 0) != depth:
            continue
        before = recorded_messages(doc, j)
        if before is None:
            return 0
        same = len(before) <= len(messages) and all(
            (a.role, a.text) == (b.role, b.text) for a, b in zip(before, messages, strict=False)
        )
        return len(before) if same else 0
    return 0
