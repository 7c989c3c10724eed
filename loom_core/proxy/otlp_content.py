"""A recorded exchange's messages in the OpenTelemetry GenAI shape (``--otlp-content``).

The GenAI semantic conventions (``gen_ai.input.messages``, ``gen_ai.output.messages``,
``gen_ai.system_instructions``, ``gen_ai.tool.definitions``; their JSON schemas in the
conventions' ``gen-ai-input-messages.json`` / ``gen-ai-output-messages.json``) give each
message a ``role`` and a list of typed ``parts``: ``text`` (``content``), ``tool_call``
(``id``, ``name``, ``arguments``), ``tool_call_response`` (``id``, ``response``),
``reasoning`` (``content``); any other part keeps its own ``type``. One converter per wire
dialect the proxy records: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses.
"""

from __future__ import annotations

from typing import Any

from loom_core.formats.wire import decode_args, flatten
from loom_core.proxy.otlp_usage import as_dict

SYSTEM_ROLES = ("system", "developer")
Part = dict[str, Any]
Message = dict[str, Any]


def _objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text(text: Any) -> Part:
    return {"type": "text", "content": text if isinstance(text, str) else flatten(text)}


def _anthropic_part(block: dict[str, Any]) -> Part:
    kind = str(block.get("type") or "")
    if kind == "text":
        return _text(block.get("text"))
    if kind in ("tool_use", "server_tool_use"):
        return {
            "type": "tool_call",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("input"),
        }
    if kind == "tool_result":
        return {
            "type": "tool_call_response",
            "id": block.get("tool_use_id"),
            "response": flatten(block.get("content")),
        }
    if kind == "thinking":
        return {"type": "reasoning", "content": block.get("thinking")}
    return {"type": kind or "unknown"}


def _anthropic_message(role: Any, content: Any) -> Message:
    blocks = _objects(content)
    parts = [_anthropic_part(b) for b in blocks] if blocks else [_text(content)]
    if parts and all(p["type"] == "tool_call_response" for p in parts):
        role = "tool"  # the conventions put tool results in a tool message
    return {"role": str(role or "user"), "parts": parts}


def _chat_message(msg: dict[str, Any]) -> Message:
    role = str(msg.get("role") or "user")
    if role == "tool":
        return {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": msg.get("tool_call_id"),
                    "response": flatten(msg.get("content")),
                }
            ],
        }
    parts = [_text(msg["content"])] if msg.get("content") else []
    for call in _objects(msg.get("tool_calls")):
        function = as_dict(call.get("function"))
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": decode_args(function.get("arguments")),
            }
        )
    return {"role": role, "parts": parts}


def _responses_item(item: dict[str, Any]) -> Message:
    kind = str(item.get("type") or "message")
    if kind.endswith("_call_output"):
        response = {"type": "tool_call_response", "id": item.get("call_id")}
        return {"role": "tool", "parts": [{**response, "response": flatten(item.get("output"))}]}
    if kind.endswith("_call"):
        arguments = decode_args(item.get("arguments"))
        call = {"type": "tool_call", "id": item.get("call_id"), "name": item.get("name")}
        return {"role": "assistant", "parts": [{**call, "arguments": arguments}]}
    if kind == "reasoning":
        summary = "".join(s.get("text") or "" for s in _objects(item.get("summary")))
        return {"role": "assistant", "parts": [{"type": "reasoning", "content": summary}]}
    return {"role": str(item.get("role") or "user"), "parts": [_text(item.get("content"))]}


def input_messages(request: dict[str, Any], dialect: str) -> tuple[list[Part], list[Message]]:
    """(system instructions, input messages) of a request as the conventions shape them."""
    if dialect == "responses":
        items = request.get("input")
        listed = [{"role": "user", "content": items}] if isinstance(items, str) else items
        system = request.get("instructions")
        return ([_text(system)] if system else []), [_responses_item(i) for i in _objects(listed)]
    if dialect == "openai":
        messages = _objects(request.get("messages"))
        system = [_text(m.get("content")) for m in messages if m.get("role") in SYSTEM_ROLES]
        rest = [_chat_message(m) for m in messages if m.get("role") not in SYSTEM_ROLES]
        return system, rest
    raw_system = request.get("system")
    system = [_text(raw_system)] if raw_system else []
    messages = _objects(request.get("messages"))
    return system, [_anthropic_message(m.get("role"), m.get("content")) for m in messages]


def output_messages(response: dict[str, Any], dialect: str, finish: str) -> list[Message]:
    """The model's reply as one output message (with its ``finish_reason``)."""
    if dialect == "responses":
        parts: list[Part] = []
        for item in _objects(response.get("output")):
            if item.get("type") == "message":
                parts += [_text(p.get("text")) for p in _objects(item.get("content"))]
            else:
                parts += _responses_item(item)["parts"]
    elif dialect == "openai":
        choices = _objects(response.get("choices"))
        message = choices[0].get("message") if choices else None
        parts = _chat_message(message)["parts"] if isinstance(message, dict) else []
    else:
        parts = [_anthropic_part(b) for b in _objects(response.get("content"))]
    return [{"role": "assistant", "parts": parts, "finish_reason": finish}]


def tool_definitions(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools offered, as ``{type, name, description, parameters}``."""
    out = []
    for tool in _objects(request.get("tools")):
        function = as_dict(tool.get("function")) or tool
        out.append(
            {
                "type": "function",
                "name": function.get("name") or tool.get("type"),
                "description": function.get("description"),
                "parameters": function.get("parameters") or function.get("input_schema"),
            }
        )
    return out
