"""Chat messages out of span attributes and events, in every shape producers write them.

Why one normalized message shape: the context view, the episodes and the tool results the
reader recovers must not care which convention a producer followed. A message here is
``{"role", "content": str | list of parts, "tool_calls"?: [{id, name, input}],
"tool_call_id"?}`` -- the shape loom's own context items have.

Where each shape comes from:

- OTel GenAI semantic conventions, current (semantic-conventions-genai, ``gen-ai-spans.md``
  and the input/output message JSON schemas): ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` hold JSON arrays of ``{role, parts: [...], finish_reason?}``;
  a part is ``{type: "text", content}``, ``{type: "tool_call", id, name, arguments}``,
  ``{type: "tool_call_response", id, response}``, ``{type: "reasoning", content}`` or a
  media part; ``gen_ai.system_instructions`` is a JSON array of parts.
- OTel GenAI conventions up to v1.36 (``gen-ai-events.md`` of that version): one span
  event per message, ``gen_ai.system.message`` / ``gen_ai.user.message`` /
  ``gen_ai.assistant.message`` / ``gen_ai.tool.message`` with ``content``, ``tool_calls``
  and ``id``, and ``gen_ai.choice`` with ``message`` (``finish_reason``, ``index``); the
  oldest shape put the whole prompt/completion as JSON in ``gen_ai.prompt`` /
  ``gen_ai.completion`` on ``gen_ai.content.prompt`` / ``.completion`` events.
- OpenLLMetry's legacy attributes (opentelemetry-semantic-conventions-ai ``SpanAttributes``
  ``LLM_PROMPTS = "gen_ai.prompt"``): ``gen_ai.prompt.N.role`` / ``.content`` /
  ``.tool_call_id`` / ``.tool_calls.M.{id,name,arguments}``, the same under
  ``gen_ai.completion.N`` plus ``.finish_reason``.
- OpenInference (openinference-semantic-conventions ``SpanAttributes`` and
  ``MessageAttributes``): ``llm.input_messages.N.message.role`` / ``.content`` /
  ``.contents.M.message_content.{type,text}`` / ``.tool_call_id`` / ``.name`` /
  ``.tool_calls.M.tool_call.{id,function.name,function.arguments}``; same for
  ``llm.output_messages``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from loom_core.formats.otlp_decode import SpanEvent

Message = dict[str, Any]
MessageCache = dict[bytes, list[Message]]
_raw_list = msgspec.json.Decoder(list[msgspec.Raw])
_INDEXED = re.compile(r"(\d+)\.(.+)")


def parse_json(value: Any) -> Any:
    """``value`` decoded when it is a JSON string, else as it is (None when undecodable)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as an object (a JSON string decoded; anything else -> {})."""
    value = parse_json(value) if isinstance(value, str) else value
    return value if isinstance(value, dict) else {}


def indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.rest = v`` flat attributes as a list (by N) of ``{rest: v}`` dicts."""
    groups: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attrs.items():
        if key.startswith(start):
            match = _INDEXED.fullmatch(key[len(start) :])
            if match:
                groups.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [groups[i] for i in sorted(groups)]


def function_of(call: dict[str, Any]) -> dict[str, Any]:
    """The ``function`` member of an OpenAI-shaped call or tool, else the object itself."""
    inner = call.get("function")
    return inner if isinstance(inner, dict) else call


def text_of(content: Any) -> str:
    """The text of a message's content (a string, or the text of its parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = [
            p.get("text") or p.get("content")
            for p in content
            if isinstance(p, dict) and p.get("type") in ("text", None)
        ]
        return "\n".join(p for p in pieces if isinstance(p, str))
    return ""


def _message(role: Any, content: Any, calls: list[dict[str, Any]], call_id: Any = None) -> Message:
    msg: Message = {"role": str(role or ""), "content": content if content is not None else ""}
    if calls:
        msg["tool_calls"] = calls
    if call_id:
        msg["tool_call_id"] = str(call_id)
    return msg


# -- OTel GenAI, current: JSON messages with parts ----------------------------------------


def semconv_messages(value: Any, cache: MessageCache | None = None) -> list[Message] | None:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` (JSON text or already a list).

    ``cache`` (one per run): every call is sent the whole history again, so each message's
    JSON is read once and its normalized form shared by every later call that was sent it
    -- without it a long run costs the square of its length."""
    if isinstance(value, str) and cache is not None:
        try:
            raws = _raw_list.decode(value)
        except (msgspec.MsgspecError, RecursionError):
            raws = None  # not a JSON list (or a value msgspec refuses): the plain path
        if raws is not None:
            out: list[Message] = []
            for raw in raws:
                key = bytes(raw)
                if key not in cache:
                    cache[key] = _item_messages(parse_json(key.decode("utf-8", "replace")))
                out += cache[key]
            return out
    items = parse_json(value)
    if not isinstance(items, list):
        return None
    return [m for item in items for m in _item_messages(item)]


def _item_messages(item: Any) -> list[Message]:
    return _parts_message(item.get("role"), item.get("parts")) if isinstance(item, dict) else []


def _parts_message(role: Any, parts: Any) -> list[Message]:
    """One message per tool response (as OpenAI sends them), one for everything else."""
    content: list[Any] = []
    calls: list[dict[str, Any]] = []
    responses: list[Message] = []
    for part in parts if isinstance(parts, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "tool_call":
            calls.append(
                {
                    "id": str(part.get("id") or ""),
                    "name": str(part.get("name") or ""),
                    "input": arguments(part.get("arguments")),
                }
            )
        elif kind == "tool_call_response":
            responses.append(
                _message("tool", _result_text(part.get("response")), [], part.get("id"))
            )
        elif kind == "text" and isinstance(part.get("content"), str):
            content.append({"type": "text", "text": part["content"]})
        elif part is not None:
            content.append(part)
    if responses and not content and not calls:
        return responses
    text_only = all(isinstance(p, dict) and p.get("type") == "text" for p in content)
    body: Any = text_of(content) if text_only else content
    return [_message(role, body, calls), *responses]


def _result_text(value: Any) -> Any:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def system_instructions(value: Any) -> str:
    """``gen_ai.system_instructions``: JSON parts (or a plain string)."""
    parsed = parse_json(value)
    if isinstance(parsed, list):
        return "\n".join(
            p.get("content") or ""
            for p in parsed
            if isinstance(p, dict) and isinstance(p.get("content"), str)
        )
    return value if isinstance(value, str) else ""


def indexed_calls(
    group: dict[str, Any], prefix: str, call: str, function: str
) -> list[dict[str, Any]]:
    """Tool calls flattened as ``prefix.M.{call}id`` / ``{call}{function}name`` /
    ``{call}{function}arguments`` (OpenInference nests name and arguments in ``function.``)."""
    return [
        {
            "id": str(c.get(f"{call}id") or ""),
            "name": str(c.get(f"{call}{function}name") or ""),
            "input": arguments(c.get(f"{call}{function}arguments")),
        }
        for c in indexed(group, prefix)
    ]


# -- OpenInference: llm.input_messages.N.message.* --------------------------------------


def openinference_messages(attrs: dict[str, Any], prefix: str) -> list[Message] | None:
    """``llm.input_messages`` / ``llm.output_messages`` flattened attributes."""
    groups = indexed(attrs, prefix)
    if not groups:
        return None
    out: list[Message] = []
    for group in groups:
        calls = indexed_calls(group, "message.tool_calls", "tool_call.", "function.")
        content: Any = group.get("message.content")
        if content is None:
            parts = indexed(group, "message.contents")
            texts = [p.get("message_content.text") for p in parts]
            content = "\n".join(t for t in texts if isinstance(t, str))
        out.append(
            _message(group.get("message.role"), content, calls, group.get("message.tool_call_id"))
        )
    return out


# -- OpenLLMetry legacy: gen_ai.prompt.N.* / gen_ai.completion.N.* -----------------------


def legacy_messages(attrs: dict[str, Any], prefix: str) -> list[Message] | None:
    """OpenLLMetry's indexed ``gen_ai.prompt`` / ``gen_ai.completion`` attributes."""
    groups = indexed(attrs, prefix)
    if not groups:
        return None
    out: list[Message] = []
    for group in groups:
        calls = indexed_calls(group, "tool_calls", "", "")
        role = group.get("role") or ("assistant" if prefix.endswith("completion") else "")
        out.append(_message(role, group.get("content"), calls, group.get("tool_call_id")))
    return out


# -- OTel GenAI up to v1.36: one span event per message ----------------------------------

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def event_messages(events: tuple[SpanEvent, ...]) -> tuple[list[Message], list[Message]]:
    """(input, output) messages from per-message events; empty lists when there are none."""
    inputs: list[Message] = []
    outputs: list[Message] = []
    for event in events:
        attrs = event.attributes
        if event.name in _EVENT_ROLES:
            inputs += _tool_results(_event_message(_EVENT_ROLES[event.name], attrs))
        elif event.name == "gen_ai.choice":
            message = parse_json(attrs.get("message"))
            body = message if isinstance(message, dict) else attrs
            if "tool_calls" not in body and "tool_calls" in attrs:  # OpenLLMetry: beside it
                body = {**body, "tool_calls": attrs["tool_calls"]}
            outputs.append(_event_message("assistant", body))
        elif event.name == "gen_ai.content.prompt":
            inputs += _whole_prompt(attrs.get("gen_ai.prompt"))
        elif event.name == "gen_ai.content.completion":
            outputs += _whole_prompt(attrs.get("gen_ai.completion"))
    return inputs, outputs


def _event_message(role: str, attrs: dict[str, Any]) -> Message:
    calls = []
    listed = parse_json(attrs.get("tool_calls"))
    for call in listed if isinstance(listed, list) else []:
        if isinstance(call, dict):
            function = function_of(call)
            calls.append(
                {
                    "id": str(call.get("id") or ""),
                    "name": str(function.get("name") or ""),
                    "input": arguments(function.get("arguments")),
                }
            )
    content = attrs.get("content")
    parsed = parse_json(content) if isinstance(content, str) and content[:1] in "[{" else None
    body = parsed if isinstance(parsed, list) else content
    call_id = attrs.get("id") if role == "tool" else None
    return _message(attrs.get("role") or role, body, calls, call_id)


def _tool_results(msg: Message) -> list[Message]:
    """An Anthropic user message of ``tool_result`` blocks (OpenLLMetry's events carry the
    blocks as sent) as one tool message per result, as the other shapes give them."""
    blocks = msg["content"]
    if msg["role"] != "user" or not isinstance(blocks, list) or not blocks:
        return [msg]
    if not all(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
        return [msg]
    return [
        _message("tool", _result_text(b.get("content")), [], b.get("tool_use_id")) for b in blocks
    ]


def _whole_prompt(value: Any) -> list[Message]:
    items = parse_json(value)
    if not isinstance(items, list):
        return []
    return [_event_message(str(i.get("role") or ""), i) for i in items if isinstance(i, dict)]
