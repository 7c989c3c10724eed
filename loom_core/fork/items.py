"""Context Items (loom-format.md §1.3): the one message shape a fork edits, sends and records.

Why loom-harness's Item shape: the ``edit`` effect stores the full context snapshot
as a list of these dicts, and loom-harness restores its context from that snapshot
when it replays a branch, so whatever we build must be exactly that shape
(``role, content, source, pinned, tokens, tool_calls, tool_call_id, name``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from loom_core.providers.base import ToolSpec


def estimate_tokens(text: str) -> int:
    """loom-harness's estimate (~4 characters per token, at least 1)."""
    return max(1, len(text) // 4)


def make_item(
    role: str,
    content: str,
    source: str,
    *,
    tool_calls: Iterable[dict[str, Any]] = (),
    tool_call_id: str = "",
    name: str = "",
    pinned: bool = False,
    tokens: int | None = None,
) -> dict[str, Any]:
    """An Item dict with every member, in loom-harness's member order."""
    return {
        "role": role,
        "content": content,
        "source": source,
        "pinned": pinned,
        "tokens": estimate_tokens(content) if tokens is None else tokens,
        "tool_calls": [normal_call(c) for c in tool_calls],
        "tool_call_id": tool_call_id,
        "name": name,
    }


def normal_call(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call as ``{id, name, input}`` with an object input (§1.4 tolerance)."""
    args = call.get("input")
    return {
        "id": str(call.get("id") or ""),
        "name": str(call.get("name") or ""),
        "input": args if isinstance(args, dict) else {},
    }


def _listed(value: Any) -> list[Any]:
    """``value`` when it is a list (a recorded context item is any JSON: a number where a
    list was expected reads as none)."""
    return value if isinstance(value, list) else []


def normal_item(data: dict[str, Any]) -> dict[str, Any]:
    """Any Item-like dict (a hand-made message, an old snapshot) with every member present."""
    content = data.get("content")
    text = content if isinstance(content, str) else "" if content is None else str(content)
    role = str(data.get("role") or "user")
    tokens = data.get("tokens")
    return make_item(
        role,
        text,
        str(data.get("source") or _default_source(role, data)),
        tool_calls=[c for c in _listed(data.get("tool_calls")) if isinstance(c, dict)],
        tool_call_id=str(data.get("tool_call_id") or ""),
        name=str(data.get("name") or ""),
        pinned=bool(data.get("pinned")),
        tokens=tokens if isinstance(tokens, int) and tokens > 0 else None,
    )


def _default_source(role: str, data: dict[str, Any]) -> str:
    if role == "assistant":
        return "model"
    if role == "tool":
        return f"tool:{data.get('name') or 'tool'}"
    return "user"


def result_content(value: Any, style: str) -> str:
    """A tool result as Item content: what the recording agent put in its context.

    The harness stores ``str(result)`` (Python repr for an int or dict result, §3.2);
    proxy results are already strings; anything else is sent as JSON.
    """
    if isinstance(value, str):
        return value
    if style == "harness":
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def assistant_item(text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    return make_item("assistant", text, "model", tool_calls=calls)


def tool_item(call: dict[str, Any], value: Any, style: str) -> dict[str, Any]:
    return make_item(
        "tool",
        result_content(value, style),
        f"tool:{call['name']}",
        tool_call_id=str(call["id"]),
        name=str(call["name"]),
    )


def _repr_call(call: dict[str, Any]) -> str:
    return (
        f"ToolCall(id={call.get('id')!r}, name={call.get('name')!r}, input={call.get('input')!r})"
    )


def harness_messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items as the neutral message list the harness hashes into model keys (§3.2).

    Assistant tool calls are the Python ``repr`` of the harness's ToolCall objects,
    which is what its ``json.dumps(default=str)`` produces.
    """
    out: list[dict[str, Any]] = []
    for it in items:
        role = it.get("role")
        if role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": it.get("content", "")}
            if it.get("tool_calls"):
                msg["tool_calls"] = [_repr_call(c) for c in it["tool_calls"]]
            out.append(msg)
        elif role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": it.get("tool_call_id", ""),
                    "name": it.get("name", ""),
                    "content": it.get("content", ""),
                }
            )
        else:
            out.append({"role": "user", "content": it.get("content", "")})
    return out


def harness_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool schemas as the harness hashes them: ``{name, description, input_schema}``."""
    return [{"name": t.name, "description": t.description, "input_schema": t.schema} for t in tools]


def context_tokens(system: str, items: list[dict[str, Any]], tools: list[ToolSpec]) -> int:
    """A rough size of a whole request (system, messages, tool schemas) in tokens."""
    total = estimate_tokens(system) if system else 0
    for it in items:
        total += estimate_tokens(str(it.get("content") or ""))
        if it.get("tool_calls"):
            total += estimate_tokens(json.dumps(it["tool_calls"]))
    if tools:
        total += estimate_tokens(json.dumps(harness_tools(tools)))
    return total
