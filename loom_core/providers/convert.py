"""The neutral Item list, turned into each API's request shape.

Why separate from the providers: the conversions are pure data work -- the part
most worth testing in isolation and the part every dialect gets subtly different
(Anthropic wants strictly alternating roles with tool results inside a user
message; Chat Completions wants ``tool`` role messages and JSON-string arguments;
the Responses API wants ``function_call``/``function_call_output`` items).
Items follow loom-format.md §1.3: ``{role, content, tool_calls: [{id, name, input}],
tool_call_id, name, ...}`` with role ``user`` | ``assistant`` | ``tool``.
"""

from __future__ import annotations

import json
from typing import Any

from loom_core.providers.base import ProviderError, ToolSpec

ROLES = ("user", "assistant", "tool")


def as_text(content: Any) -> str:
    """Item content as the string every API accepts: strings as is, ``None`` as "",
    anything else (a dict result, a list) JSON-encoded so nothing is lost."""
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def calls_of(item: dict[str, Any]) -> list[dict[str, Any]]:
    """An assistant Item's tool calls, each normalised to ``{id, name, input: dict}``."""
    out = []
    for call in item.get("tool_calls") or []:
        args = call.get("input")
        out.append(
            {
                "id": str(call.get("id") or ""),
                "name": str(call.get("name") or ""),
                "input": args if isinstance(args, dict) else {},
            }
        )
    return out


def _role(item: dict[str, Any], index: int) -> str:
    role = item.get("role")
    if role not in ROLES:
        raise ProviderError(
            f"context item {index}: unknown role {role!r} (expected one of {', '.join(ROLES)})"
        )
    return str(role)


# -- Anthropic Messages ---------------------------------------------------------------


def _anthropic_blocks(item: dict[str, Any], role: str) -> list[dict[str, Any]]:
    """The content blocks one Item contributes (empty text is dropped: the API rejects it)."""
    if role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": str(item.get("tool_call_id") or ""),
                "content": as_text(item.get("content")),
            }
        ]
    text = as_text(item.get("content"))
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if role == "assistant":
        blocks += [{"type": "tool_use", **call} for call in calls_of(item)]
    return blocks


def anthropic_messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items -> Anthropic ``messages``: tool results become ``tool_result`` blocks of a
    user message, consecutive same-role messages are merged (the API requires
    alternation), tool results lead their user message, and a message that is a
    single text block is sent as a plain string."""
    merged: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        role = _role(item, i)
        blocks = _anthropic_blocks(item, role)
        if not blocks:
            continue
        wire_role = "assistant" if role == "assistant" else "user"
        if merged and merged[-1]["role"] == wire_role:
            merged[-1]["content"] += blocks
        else:
            merged.append({"role": wire_role, "content": blocks})
    for message in merged:
        blocks = message["content"]
        # stable: tool_result blocks first, as the API wants after a tool_use turn
        blocks.sort(key=lambda b: b["type"] != "tool_result")
        if len(blocks) == 1 and blocks[0]["type"] == "text":
            message["content"] = blocks[0]["text"]
    return merged


def anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "name": t.name,
            **({"description": t.description} if t.description else {}),
            "input_schema": t.schema,
        }
        for t in tools
    ]


# -- OpenAI Chat Completions ----------------------------------------------------------


def chat_messages(system: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items -> Chat ``messages``: the system prompt first, assistant calls as
    ``tool_calls`` with JSON-string arguments, tool results as ``tool`` messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for i, item in enumerate(items):
        role = _role(item, i)
        text = as_text(item.get("content"))
        if role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(item.get("tool_call_id") or ""),
                    "content": text,
                }
            )
        elif role == "assistant" and (calls := calls_of(item)):
            out.append(
                {
                    "role": "assistant",
                    "content": text or None,
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": json.dumps(c["input"])},
                        }
                        for c in calls
                    ],
                }
            )
        else:
            out.append({"role": role, "content": text})
    return out


def chat_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                **({"description": t.description} if t.description else {}),
                "parameters": t.schema,
            },
        }
        for t in tools
    ]


# -- OpenAI Responses -----------------------------------------------------------------


def responses_input(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items -> Responses ``input``: messages, then each assistant call as a
    ``function_call`` item and each tool result as a ``function_call_output``."""
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        role = _role(item, i)
        text = as_text(item.get("content"))
        if role == "tool":
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": str(item.get("tool_call_id") or ""),
                    "output": text,
                }
            )
            continue
        calls = calls_of(item) if role == "assistant" else []
        if text or not calls:
            out.append({"role": role, "content": text})
        out += [
            {
                "type": "function_call",
                "call_id": c["id"],
                "name": c["name"],
                "arguments": json.dumps(c["input"]),
            }
            for c in calls
        ]
    return out


def responses_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    # strict=False: recorded schemas are rarely written for strict mode (which
    # demands additionalProperties=false and every property required)
    return [
        {
            "type": "function",
            "name": t.name,
            **({"description": t.description} if t.description else {}),
            "parameters": t.schema,
            "strict": False,
        }
        for t in tools
    ]


def decode_arguments(raw: str | None) -> dict[str, Any]:
    """OpenAI ``arguments`` JSON -> dict; undecodable or non-object -> ``{}`` (§1.4)."""
    try:
        value = json.loads(raw or "")
    except (ValueError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}
