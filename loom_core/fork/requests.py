"""A recorded wire request (Anthropic Messages, OpenAI Chat, OpenAI Responses) as Items.

Why: a trace alone only lets us *reconstruct* what a model saw (and know tools by
name). When the proxy stored the exact request in its sidecar, a fork should start
from exactly that: the same system prompt, the same messages in the same order and
the tools with their real schemas. Blocks that a neutral Item cannot hold (images,
thinking, documents) are dropped; text, tool calls and tool results are kept.
"""

from __future__ import annotations

from typing import Any

from loom_core.fork.context import ForkContext
from loom_core.fork.items import assistant_item, make_item
from loom_core.formats.wire import decode_args
from loom_core.providers.base import ToolSpec

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def _text(content: Any) -> str:
    """A string, or the concatenated text of a block list (text / input_text / output_text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text") or ""
            for b in content
            if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def _texts(content: Any) -> list[str]:
    """Each non-empty text block of a content value (a plain string is one block)."""
    if isinstance(content, str):
        return [content] if content else []
    return [
        b["text"]
        for b in content or []
        if isinstance(b, dict)
        and b.get("type") in ("text", "input_text", "output_text")
        and isinstance(b.get("text"), str)
        and b["text"]
    ]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _spec(name: Any, description: Any, schema: Any) -> ToolSpec:
    return ToolSpec(
        str(name or ""),
        description if isinstance(description, str) else "",
        schema if isinstance(schema, dict) else dict(_EMPTY_SCHEMA),
    )


# -- Anthropic Messages ---------------------------------------------------------------


def anthropic_context(req: dict[str, Any]) -> ForkContext:
    ctx = ForkContext(
        _text(req.get("system")),
        [],
        [],
        str(req.get("model") or ""),
        _int(req.get("max_tokens")),
        _float(req.get("temperature")),
        source="request",
    )
    names: dict[str, str] = {}  # tool call id -> tool name
    for msg in req.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        if msg.get("role") == "assistant":
            blocks = content if isinstance(content, list) else []
            calls = [
                {"id": b.get("id"), "name": b.get("name"), "input": b.get("input")}
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "tool_use"
            ]
            for c in calls:
                names[str(c["id"] or "")] = str(c["name"] or "")
            ctx.messages.append(assistant_item("".join(_texts(content)), calls))
            continue
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                tuid = str(block.get("tool_use_id") or "")
                name = names.get(tuid, "tool")
                ctx.messages.append(
                    make_item(
                        "tool",
                        _text(block.get("content")),
                        f"tool:{name}",
                        tool_call_id=tuid,
                        name=name,
                    )
                )
        ctx.messages += [make_item("user", t, "user") for t in _texts(content)]
    ctx.tools = [
        _spec(t.get("name"), t.get("description"), t.get("input_schema"))
        for t in req.get("tools") or []
        if isinstance(t, dict) and t.get("name")
    ]
    return ctx


# -- OpenAI Chat Completions ----------------------------------------------------------


def chat_context(req: dict[str, Any]) -> ForkContext:
    ctx = ForkContext(
        "",
        [],
        [],
        str(req.get("model") or ""),
        _int(req.get("max_completion_tokens")) or _int(req.get("max_tokens")),
        _float(req.get("temperature")),
        source="request",
    )
    names: dict[str, str] = {}  # tool call id -> tool name
    systems = []
    for msg in req.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        role, content = msg.get("role"), msg.get("content")
        if role in ("system", "developer"):
            systems.append(_text(content))
        elif role == "assistant":
            calls = [
                {
                    "id": c.get("id"),
                    "name": (c.get("function") or {}).get("name"),
                    "input": decode_args((c.get("function") or {}).get("arguments")),
                }
                for c in msg.get("tool_calls") or []
                if isinstance(c, dict)
            ]
            for c in calls:
                names[str(c["id"] or "")] = str(c["name"] or "")
            ctx.messages.append(assistant_item(_text(content), calls))
        elif role == "tool":
            tuid = str(msg.get("tool_call_id") or "")
            name = names.get(tuid, "tool")
            ctx.messages.append(
                make_item("tool", _text(content), f"tool:{name}", tool_call_id=tuid, name=name)
            )
        else:
            ctx.messages.append(make_item("user", _text(content), "user"))
    ctx.system = "\n\n".join(s for s in systems if s)
    ctx.tools = [
        _spec(f.get("name"), f.get("description"), f.get("parameters"))
        for t in req.get("tools") or []
        if isinstance(t, dict)
        for f in [t.get("function") or t]
        if isinstance(f, dict) and f.get("name")
    ]
    return ctx


# -- OpenAI Responses -----------------------------------------------------------------


def responses_context(req: dict[str, Any]) -> ForkContext:
    instructions = req.get("instructions")
    ctx = ForkContext(
        instructions if isinstance(instructions, str) else "",
        [],
        [],
        str(req.get("model") or ""),
        _int(req.get("max_output_tokens")),
        _float(req.get("temperature")),
        source="request",
    )
    names: dict[str, str] = {}  # tool call id -> tool name
    items = req.get("input")
    items = [{"role": "user", "content": items}] if isinstance(items, str) else items or []
    systems: list[str] = []
    for item in items:
        if isinstance(item, dict):
            _responses_item(ctx, item, systems, names)
    if not ctx.system:
        ctx.system = "\n\n".join(s for s in systems if s)
    ctx.tools = [
        _spec(t.get("name"), t.get("description"), t.get("parameters"))
        for t in req.get("tools") or []
        if isinstance(t, dict) and t.get("name")
    ]
    return ctx


def _responses_item(
    ctx: ForkContext, item: dict[str, Any], systems: list[str], names: dict[str, str]
) -> None:
    kind, role = str(item.get("type") or "message"), item.get("role")
    if kind == "function_call":
        call: dict[str, Any] = {
            "id": str(item.get("call_id") or ""),
            "name": str(item.get("name") or ""),
            "input": decode_args(item.get("arguments")),
        }
        names[call["id"]] = call["name"]
        last = ctx.messages[-1] if ctx.messages else None
        if last is not None and last["role"] == "assistant":
            last["tool_calls"].append(call)  # calls that follow the assistant's text
        else:
            ctx.messages.append(assistant_item("", [call]))
    elif kind == "function_call_output":
        tuid = str(item.get("call_id") or "")
        name = names.get(tuid, "tool")
        ctx.messages.append(
            make_item(
                "tool", _text(item.get("output")), f"tool:{name}", tool_call_id=tuid, name=name
            )
        )
    elif kind == "message" and role in ("system", "developer"):
        systems.append(_text(item.get("content")))
    elif kind == "message" and role == "assistant":
        ctx.messages.append(assistant_item(_text(item.get("content")), []))
    elif kind == "message":
        ctx.messages += [make_item("user", t, "user") for t in _texts(item.get("content"))]


def request_context(request: dict[str, Any], dialect: str) -> ForkContext:
    """Dispatch on the sidecar's dialect name (``anthropic`` / ``openai`` / ``responses``)."""
    if dialect == "responses":
        return responses_context(request)
    if dialect == "openai":
        return chat_context(request)
    return anthropic_context(request)
