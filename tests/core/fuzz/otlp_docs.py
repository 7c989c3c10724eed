"""Valid OTLP/JSON trace requests for the fuzzers, with GenAI spans of every convention.

Why its own strategy: an OTLP file is no loom document, so the schema-driven strategies
cannot build one; the mutation families then break these the same way as loom's own.
Attribute names are the ones :mod:`loom_core.formats.otlp_genai` reads.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

_text = st.text(max_size=20)
_count = st.integers(0, 10**6)


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        wrapped: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        wrapped = {"intValue": str(value)}
    elif isinstance(value, float):
        wrapped = {"doubleValue": value}
    elif isinstance(value, list):
        wrapped = {"arrayValue": {"values": [{"stringValue": str(v)} for v in value]}}
    else:
        wrapped = {"stringValue": value}
    return {"key": key, "value": wrapped}


@st.composite
def _parts(draw: st.DrawFn) -> list[dict[str, Any]]:
    kinds = draw(st.lists(st.sampled_from(("text", "tool_call", "tool_call_response")), max_size=3))
    parts: list[dict[str, Any]] = []
    for kind in kinds:
        if kind == "text":
            parts.append({"type": "text", "content": draw(_text)})
        elif kind == "tool_call":
            parts.append(
                {
                    "type": "tool_call",
                    "id": draw(_text),
                    "name": "search",
                    "arguments": {"q": draw(_text)},
                }
            )
        else:
            parts.append({"type": "tool_call_response", "id": draw(_text), "response": draw(_text)})
    return parts


@st.composite
def _messages(draw: st.DrawFn) -> str:
    roles = st.sampled_from(("system", "user", "assistant", "tool"))
    items = draw(st.lists(st.fixed_dictionaries({"role": roles, "parts": _parts()}), max_size=3))
    return json.dumps(items)


@st.composite
def _sdk_messages(draw: st.DrawFn) -> str:
    """``ai.prompt.messages``: the Vercel AI SDK's own message and part shapes."""
    part = st.sampled_from(
        (
            {"type": "text", "text": "hi"},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "search", "input": {"q": 1}},
            {"type": "tool-result", "toolCallId": "c1", "output": {"type": "text", "value": "x"}},
            {"type": "tool-result", "toolCallId": "c1", "result": {"n": 1}},
            {"type": "file", "mediaType": "image/png", "data": "AAAA"},
        )
    )
    content = st.one_of(_text, st.lists(part, max_size=3))
    roles = st.sampled_from(("system", "user", "assistant", "tool"))
    items = draw(st.lists(st.fixed_dictionaries({"role": roles, "content": content}), max_size=3))
    return json.dumps(items)


def _ai_sdk(draw: st.DrawFn, role: str, attrs: dict[str, Any]) -> None:
    """A span of the Vercel AI SDK's own shape (``ai.operationId``, ``ai.*``)."""
    if role == "ai.call":
        attrs["ai.operationId"] = draw(
            st.sampled_from(("ai.generateText.doGenerate", "ai.streamText.doStream"))
        )
        attrs["ai.model.id"] = "gpt-4o"
        attrs["ai.prompt.messages"] = draw(_sdk_messages())
        attrs["ai.prompt.tools"] = [json.dumps({"type": "function", "name": "search"})]
        attrs["ai.response.text"] = draw(_text)
        calls = [{"toolCallId": draw(_text), "toolName": "search", "input": draw(_text)}]
        attrs["ai.response.toolCalls"] = json.dumps(calls)
        attrs["ai.usage.inputTokens"] = draw(_count)
        attrs["ai.usage.outputTokens"] = draw(_count)
        attrs["ai.usage.inputTokenDetails.cacheReadTokens"] = draw(_count)
    elif role == "ai.toolCall":
        attrs["ai.operationId"] = "ai.toolCall"
        attrs["ai.toolCall.name"] = "search"
        attrs["ai.toolCall.id"] = draw(_text)
        attrs["ai.toolCall.args"] = draw(_text)
        attrs["ai.toolCall.result"] = json.dumps(draw(_text))
    else:
        attrs["ai.operationId"] = "ai.generateText"
        attrs["ai.usage.inputTokens"] = draw(_count)
        attrs["ai.telemetry.functionId"] = draw(_text)


@st.composite
def _attributes(draw: st.DrawFn, role: str) -> list[dict[str, Any]]:
    attrs: dict[str, Any] = {}
    if role == "chat":
        attrs["gen_ai.operation.name"] = "chat"
        attrs["gen_ai.request.model"] = draw(st.sampled_from(("gpt-4o", "claude-sonnet-4-5", "")))
        attrs["gen_ai.input.messages"] = draw(_messages())
        attrs["gen_ai.output.messages"] = draw(_messages())
        attrs["gen_ai.usage.input_tokens"] = draw(_count)
        attrs["gen_ai.usage.output_tokens"] = draw(_count)
        attrs["gen_ai.usage.cache_read.input_tokens"] = draw(_count)
        attrs["gen_ai.response.finish_reasons"] = ["stop"]
    elif role == "LLM":
        attrs["openinference.span.kind"] = "LLM"
        attrs["llm.model_name"] = "gpt-4o"
        attrs["llm.input_messages.0.message.role"] = "user"
        attrs["llm.input_messages.0.message.content"] = draw(_text)
        attrs["llm.output_messages.0.message.role"] = "assistant"
        attrs["llm.output_messages.0.message.tool_calls.0.tool_call.id"] = draw(_text)
        attrs["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] = "search"
        attrs["llm.token_count.prompt"] = draw(_count)
    elif role == "execute_tool":
        attrs["gen_ai.operation.name"] = "execute_tool"
        attrs["gen_ai.tool.name"] = draw(st.sampled_from(("search", "bash", "")))
        attrs["gen_ai.tool.call.id"] = draw(_text)
        attrs["gen_ai.tool.call.result"] = draw(_text)
    elif role == "TOOL":
        attrs["openinference.span.kind"] = "TOOL"
        attrs["tool.name"] = "search"
        attrs["input.value"] = draw(_text)
        attrs["output.value"] = draw(_text)
    elif role == "invoke_agent":
        attrs["gen_ai.operation.name"] = "invoke_agent"
        attrs["gen_ai.agent.name"] = draw(_text)
    elif role.startswith("ai."):
        _ai_sdk(draw, role, attrs)
    return [_kv(k, v) for k, v in attrs.items()]


@st.composite
def otlp_requests(draw: st.DrawFn) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` as OTLP/JSON: one trace, a small span tree."""
    trace_id = draw(st.binary(min_size=16, max_size=16)).hex()
    count = draw(st.integers(1, 6))
    roles = ("invoke_agent", "chat", "LLM", "execute_tool", "TOOL", "other")
    roles += ("ai.run", "ai.call", "ai.toolCall")  # the Vercel AI SDK's own spans
    spans = []
    for i in range(count):
        start = 1_700_000_000_000_000_000 + draw(st.integers(0, 10**9))
        parent = draw(st.integers(0, i)) if i else 0
        spans.append(
            {
                "traceId": trace_id,
                "spanId": f"{i + 1:016x}",
                "parentSpanId": f"{parent:016x}" if parent else "",
                "name": draw(_text),
                "kind": draw(st.integers(0, 5)),
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(start + draw(st.integers(0, 10**9))),
                "attributes": draw(_attributes(draw(st.sampled_from(roles)))),
                "status": {"code": draw(st.integers(0, 2))},
            }
        )
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_kv("service.name", "agent")]},
                "scopeSpans": [{"scope": {"name": "fuzz"}, "spans": spans}],
            }
        ]
    }
