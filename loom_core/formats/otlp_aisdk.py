"""The Vercel AI SDK's own spans (``ai`` on npm, ``experimental_telemetry``) read as GenAI ones.

Why a translation: AI SDK 6 (and AI SDK 7's ``LegacyOpenTelemetry``) write spans of their own
shape, not the OTel GenAI conventions, so a file of them showed no step at all. Each such
span's attributes are given the GenAI names :mod:`loom_core.formats.otlp_genai` reads (a
value the span already has under that name wins), so one reading of a model call serves
every producer; the span's record, what the raw view shows, stays as written.

What the AI SDK writes (packages/ai/src/telemetry and generate-text/ of github.com/vercel/ai;
https://ai-sdk.dev/docs/ai-sdk-core/telemetry), told apart by ``ai.operationId``:

- ``ai.generateText`` / ``ai.streamText`` (and ``…Object``): one call of the function, the
  whole multi-step run, with the run's totals in ``ai.usage.*`` and the final text. It is
  not a model call: it is read as an agent, so its totals are never added to the calls'.
- ``ai.generateText.doGenerate`` / ``ai.streamText.doStream`` (and ``…Object``): one
  request to the model: ``ai.model.id``, ``ai.response.model``, ``ai.prompt.messages`` (the
  SDK's prompt: ``system``/``user``/``assistant``/``tool`` messages whose parts are
  ``text``, ``reasoning``, ``file``, ``tool-call`` {toolCallId, toolName, input (``args``
  before AI SDK 5)} and ``tool-result`` {toolCallId, output {type, value} (``result``
  before 5)}), ``ai.prompt.tools`` (one JSON text per tool), ``ai.response.text`` /
  ``.reasoning`` / ``.object`` / ``.toolCalls``, ``ai.response.finishReason`` and
  ``ai.usage.inputTokens`` (cache reads and writes included, as GenAI counts them) /
  ``outputTokens`` with ``inputTokenDetails.cacheReadTokens`` / ``cacheWriteTokens`` and
  ``outputTokenDetails.reasoningTokens`` (``promptTokens`` / ``completionTokens``,
  ``cachedInputTokens`` and ``reasoningTokens`` in older releases).
- ``ai.toolCall``: one tool execution, ``ai.toolCall.name`` / ``.id`` / ``.args`` /
  ``.result`` (``.input`` / ``.output`` in some releases); the result is JSON text.
- ``ai.embed…`` / ``ai.rerank…``: no step of an agent run.

OpenLLMetry-JS (``@traceloop/node-server-sdk``) rewrites these spans as it exports them:
both the run span and each call become ``chat <model>`` (the run one with no
``gen_ai.operation.name``), their content moves to ``gen_ai.input.messages`` /
``gen_ai.output.messages``, but ``ai.operationId`` stays. So the operation id decides what
a span is, never its name nor a ``gen_ai.operation.name`` added to it.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from loom_core.formats.otlp_decode import Span
from loom_core.formats.otlp_messages import parse_json

OPERATION = "ai.operationId"
_RUNS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
_CALLS = {f"{run}.{'doStream' if 'stream' in run else 'doGenerate'}" for run in _RUNS}
_GENAI_OPERATION = {"agent": "invoke_agent", "model": "chat", "tool": "execute_tool"}

# GenAI name <- the AI SDK's names for the same fact, newest first
_Keys = dict[str, tuple[str, ...]]
_MODEL_KEYS: _Keys = {
    "gen_ai.request.model": ("ai.model.id",),
    "gen_ai.response.model": ("ai.response.model",),
    "gen_ai.usage.input_tokens": ("ai.usage.inputTokens", "ai.usage.promptTokens"),
    "gen_ai.usage.output_tokens": ("ai.usage.outputTokens", "ai.usage.completionTokens"),
    "gen_ai.usage.cache_read.input_tokens": (
        "ai.usage.inputTokenDetails.cacheReadTokens",
        "ai.usage.cachedInputTokens",
    ),
    "gen_ai.usage.cache_creation.input_tokens": ("ai.usage.inputTokenDetails.cacheWriteTokens",),
    "gen_ai.usage.reasoning.output_tokens": (
        "ai.usage.outputTokenDetails.reasoningTokens",
        "ai.usage.reasoningTokens",
    ),
}
_TOOL_KEYS: _Keys = {
    "gen_ai.tool.name": ("ai.toolCall.name",),
    "gen_ai.tool.call.id": ("ai.toolCall.id",),
    "gen_ai.tool.call.arguments": ("ai.toolCall.args", "ai.toolCall.input"),
    "gen_ai.tool.call.result": ("ai.toolCall.result", "ai.toolCall.output"),
}
_AGENT_KEYS: _Keys = {
    "gen_ai.agent.name": ("ai.telemetry.metadata.agent", "ai.telemetry.functionId", OPERATION),
}


def role(attrs: dict[str, Any]) -> str | None:
    """``model``, ``tool``, ``agent`` or "" for a span of the AI SDK; None for any other."""
    op = attrs.get(OPERATION)
    if not isinstance(op, str) or not op.startswith("ai."):
        return None
    if op in _CALLS:
        return "model"
    if op == "ai.toolCall":
        return "tool"
    return "agent" if op in _RUNS else ""


def as_genai(span: Span) -> Span:
    """``span`` with its AI SDK facts under GenAI names (any other span as it is)."""
    kind = role(span.attributes)
    if not kind:
        return span
    attrs = dict(span.attributes)
    attrs["gen_ai.operation.name"] = _GENAI_OPERATION[kind]
    keys: _Keys = {"model": _MODEL_KEYS, "tool": _TOOL_KEYS, "agent": _AGENT_KEYS}[kind]
    for name, sources in keys.items():
        value = next((attrs[k] for k in sources if attrs.get(k) not in (None, "")), None)
        if name not in attrs and value is not None:
            attrs[name] = value
    if kind == "model":
        _model_content(span.attributes, attrs)
    return dataclasses.replace(span, attributes=attrs)


def _model_content(source: dict[str, Any], attrs: dict[str, Any]) -> None:
    """Messages, tools offered and finish reason of one model call, in GenAI form."""
    prompt = parse_json(source.get("ai.prompt.messages"))
    if "gen_ai.input.messages" not in attrs and isinstance(prompt, list):
        attrs["gen_ai.input.messages"] = _dumps([_message(m) for m in prompt])
    output = _output_message(source)
    if "gen_ai.output.messages" not in attrs and output is not None:
        attrs["gen_ai.output.messages"] = _dumps([output])
    tools = source.get("ai.prompt.tools")
    if "gen_ai.tool.definitions" not in attrs and isinstance(tools, list):
        attrs["gen_ai.tool.definitions"] = _dumps([parse_json(t) for t in tools])
    reason = source.get("ai.response.finishReason")
    if "gen_ai.response.finish_reasons" not in attrs and isinstance(reason, str):
        attrs["gen_ai.response.finish_reasons"] = [reason]


def _message(msg: Any) -> dict[str, Any]:
    """One message of ``ai.prompt.messages`` as a GenAI message (role and parts)."""
    if not isinstance(msg, dict):
        return {"role": "", "parts": [msg]}
    content = msg.get("content")
    if isinstance(content, str):
        return {"role": msg.get("role"), "parts": [{"type": "text", "content": content}]}
    parts = content if isinstance(content, list) else []
    return {"role": msg.get("role"), "parts": [_part(p) for p in parts]}


def _part(part: Any) -> Any:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("text", "reasoning"):
        return {"type": kind, "content": part.get("text")}
    if kind == "tool-call":
        args = part["input"] if "input" in part else part.get("args")
        return {
            "type": "tool_call",
            "id": part.get("toolCallId"),
            "name": part.get("toolName"),
            "arguments": args,
        }
    if kind == "tool-result":
        return {
            "type": "tool_call_response",
            "id": part.get("toolCallId"),
            "response": _result(part),
        }
    return part  # a file or image part: kept as the SDK wrote it


def _result(part: dict[str, Any]) -> Any:
    """What a tool result sent the model: ``output.value`` (AI SDK 5+; a text, a JSON value
    or content parts, by ``output.type``), or ``result`` before."""
    output = part.get("output")
    if isinstance(output, dict) and "type" in output:
        return output.get("value")
    return part.get("result")


def _output_message(source: dict[str, Any]) -> dict[str, Any] | None:
    """The reply as one assistant message; None when the span recorded no output."""
    keys = ("ai.response.reasoning", "ai.response.text", "ai.response.object")
    if not any(k in source for k in (*keys, "ai.response.toolCalls")):
        return None
    parts: list[dict[str, Any]] = []
    for key, kind in zip(keys, ("reasoning", "text", "text"), strict=True):
        value = source.get(key)
        if isinstance(value, str) and value:
            parts.append({"type": kind, "content": value})
    calls = parse_json(source.get("ai.response.toolCalls"))
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            args = call["input"] if "input" in call else call.get("args")
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("toolCallId"),
                    "name": call.get("toolName"),
                    "arguments": args,
                }
            )
    return {"role": "assistant", "parts": parts}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
