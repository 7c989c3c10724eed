"""What a span means for an agent run: a model call, a tool call, an agent, or nothing.

Why separate from the run assembly: the conventions (OTel GenAI current and older,
OpenLLMetry's, OpenInference's) are many and change; each fact read from a span lives here,
with where it came from, and :mod:`loom_core.formats.otlp` only orders and nests the steps.

Sources: OTel GenAI semantic conventions (semantic-conventions-genai ``gen-ai-spans.md``,
``gen-ai-agent-spans.md``, ``execute-tool.md``): ``gen_ai.operation.name`` is ``chat`` /
``text_completion`` / ``generate_content`` for model calls, ``execute_tool`` for tools,
``invoke_agent`` / ``create_agent`` for agents; usage in ``gen_ai.usage.input_tokens`` /
``output_tokens`` with ``gen_ai.usage.cache_read.input_tokens``,
``gen_ai.usage.cache_creation.input_tokens`` (both part of the input count) and
``gen_ai.usage.reasoning.output_tokens``; tools in ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``.
OpenLLMetry (opentelemetry-semantic-conventions-ai): ``llm.request.type`` chat/completion,
``traceloop.span.kind`` workflow/task/agent/tool, ``gen_ai.usage.prompt_tokens`` /
``completion_tokens``, ``gen_ai.usage.cache_read_input_tokens``,
``llm.usage.reasoning_tokens``, ``traceloop.entity.input`` / ``output``. OpenInference
(openinference-semantic-conventions): ``openinference.span.kind`` LLM/TOOL/AGENT/CHAIN,
``llm.model_name``, ``llm.token_count.prompt`` / ``completion`` /
``prompt_details.cache_read`` / ``cache_write`` / ``completion_details.reasoning``,
``llm.tools.N.tool.json_schema``, ``tool.name``, ``tool_call.id``, ``input.value`` /
``output.value``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loom_core.formats import otlp_aisdk
from loom_core.formats import otlp_messages as om
from loom_core.formats.otlp_decode import Span

MODEL_OPS = frozenset({"chat", "text_completion", "generate_content", "completion"})
AGENT_OPS = frozenset({"invoke_agent", "create_agent"})


@dataclass
class ModelCall:
    """One model call read from a span (``inputs`` None: content was not recorded)."""

    model: str
    text: str
    tool_calls: list[dict[str, Any]]
    usage: dict[str, Any]
    stop_reason: str
    inputs: list[om.Message] | None
    system: str
    tools: list[str] = field(default_factory=list)
    has_output: bool = False
    response_id: str = ""
    problems: list[str] = field(default_factory=list)  # values shown raw, not counted


@dataclass
class ToolCall:
    """One tool execution read from a span."""

    name: str
    call_id: str
    arguments: Any
    result: Any
    error: str = ""


def role_of(span: Span) -> str:
    """``model``, ``tool``, ``agent`` or "" (a span that is no step, e.g. an HTTP call)."""
    attrs = span.attributes
    ai_sdk = otlp_aisdk.role(attrs)  # the Vercel AI SDK's spans say it in their own words
    if ai_sdk is not None:
        return ai_sdk
    op = _first_str(attrs, "gen_ai.operation.name")
    oi = _first_str(attrs, "openinference.span.kind").upper()
    loop = _first_str(attrs, "traceloop.span.kind").lower()
    if op in MODEL_OPS or oi == "LLM" or _first_str(attrs, "llm.request.type") in MODEL_OPS:
        return "model"
    if op == "execute_tool" or oi == "TOOL" or loop == "tool":
        return "tool"
    if op in AGENT_OPS or oi == "AGENT" or loop == "agent":
        return "agent"
    return ""


def run_output(span: Span) -> str:
    """What a run's root span (a workflow, chain or agent) says it returned, when it is
    text: OpenLLMetry's ``traceloop.entity.output`` (JSON, its ``outputs``) or
    OpenInference's ``output.value``. The run's answer when no model step gave one (a
    LangChain workflow whose model calls were not instrumented)."""
    attrs = span.attributes
    loop = om.parse_json(attrs.get("traceloop.entity.output"))
    if isinstance(loop, dict) and isinstance(loop.get("outputs"), str):
        return str(loop["outputs"])
    value = attrs.get("output.value")
    if isinstance(value, str) and attrs.get("output.mime_type") != "application/json":
        return value
    return ""


def agent_name(span: Span) -> str:
    attrs = otlp_aisdk.as_genai(span).attributes
    for key in ("gen_ai.agent.name", "agent.name", "traceloop.entity.name"):
        if isinstance(attrs.get(key), str) and attrs[key]:
            return str(attrs[key])
    return span.name


# -- model calls ---------------------------------------------------------------------------


def model_call(span: Span, cache: om.MessageCache | None = None) -> ModelCall:
    """A model span read in whichever convention it follows (the first that has content)."""
    span = otlp_aisdk.as_genai(span)
    attrs = span.attributes
    inputs, outputs = _messages(span, cache)
    system = om.system_instructions(attrs.get("gen_ai.system_instructions"))
    if inputs is not None:
        system_msgs = [m for m in inputs if m["role"] in ("system", "developer")]
        inputs_wo = [m for m in inputs if m not in system_msgs]
        system = system or "\n".join(om.text_of(m["content"]) for m in system_msgs)
        inputs = ([{"role": "system", "content": system}] if system else []) + inputs_wo
    text, calls = "", []
    problems: list[str] = []
    for msg in outputs or []:
        if msg["role"] in ("assistant", "model", ""):
            piece = om.text_of(msg["content"])
            text = f"{text}\n{piece}" if text and piece else text or piece
            calls += msg.get("tool_calls", [])
    return ModelCall(
        model=_first_str(
            attrs,
            "gen_ai.response.model",
            "llm.response.model_name",
            "gen_ai.request.model",
            "llm.model_name",
            "llm.request.model_name",
        ),
        text=text,
        tool_calls=calls,
        usage=usage(attrs, problems),
        stop_reason="error"
        if failure(span) and not calls and not text
        else _stop_reason(attrs, calls),
        inputs=inputs,
        system=system,
        tools=_tool_names(attrs),
        has_output=outputs is not None,
        response_id=_first_str(attrs, "gen_ai.response.id", "llm.response.id"),
        problems=problems,
    )


def _messages(
    span: Span, cache: om.MessageCache | None
) -> tuple[list[om.Message] | None, list[om.Message] | None]:
    attrs = span.attributes
    inputs = om.semconv_messages(attrs.get("gen_ai.input.messages"), cache)
    outputs = om.semconv_messages(attrs.get("gen_ai.output.messages"))
    if inputs is not None or outputs is not None:
        return inputs, outputs
    pairs = (
        ("llm.input_messages", "llm.output_messages", om.openinference_messages),
        ("gen_ai.prompt", "gen_ai.completion", om.legacy_messages),
    )
    for inp, out, read in pairs:
        inputs, outputs = read(attrs, inp), read(attrs, out)
        if inputs is not None or outputs is not None:
            return inputs, outputs
    inputs, outputs = om.event_messages(span.events)
    return inputs or None, outputs or None


def _first_str(attrs: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _count(attrs: dict[str, Any], problems: list[str] | None, *keys: str) -> int:
    """The first of ``keys`` that holds a token count. A count written as a string (Spring
    AI's Micrometer writes every attribute so: ``"11"``) is read as its number; a value
    that is no number is skipped and named in ``problems`` -- shown raw, never read as 0."""
    for key in keys:
        value = attrs.get(key)
        number = _number(value)
        if number is not None:
            return number
        if value is not None and problems is not None:
            problems.append(f"{key} = {str(value)[:40]!r} is not a number of tokens")
    return 0


def _number(value: Any) -> int | None:
    """A non-negative count from a JSON number or a numeric string, else None."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if 0 <= value < 1 << 63 else None


def usage(attrs: dict[str, Any], problems: list[str] | None = None) -> dict[str, Any]:
    """Token counts in the OpenAI Responses shape (``input_tokens`` includes the cached ones,
    as the GenAI conventions count them), which the pricing view reads as it is; a count
    that is not a number is named in ``problems``."""
    read = _count(
        attrs,
        problems,
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_read_input_tokens",
        "llm.token_count.prompt_details.cache_read",
    )
    write = _count(
        attrs,
        problems,
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.usage.cache_write.input_tokens",  # the Anthropic SDK's own spans
        "gen_ai.usage.cache_creation_input_tokens",
        "llm.token_count.prompt_details.cache_write",
    )
    reasoning = _count(
        attrs,
        problems,
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.usage.reasoning_tokens",
        "llm.usage.reasoning_tokens",
        "llm.token_count.completion_details.reasoning",
    )
    out: dict[str, Any] = {
        "input_tokens": _count(
            attrs,
            problems,
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
        ),
        "output_tokens": _count(
            attrs,
            problems,
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
        ),
    }
    if read or write:
        out["input_tokens_details"] = {"cached_tokens": read, "cache_write_tokens": write}
    if reasoning:
        out["output_tokens_details"] = {"reasoning_tokens": reasoning}
    return out


def _stop_reason(attrs: dict[str, Any], calls: list[dict[str, Any]]) -> str:
    """loom's ``tool_use`` / ``end_turn``; other provider reasons (``length`` …) kept."""
    if calls:
        return "tool_use"
    reasons = attrs.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, str) and reasons.startswith("["):  # Spring AI: '["STOP"]'
        reasons = om.parse_json(reasons)
    reason = reasons[0] if isinstance(reasons, list) and reasons else attrs.get("llm.finish_reason")
    if not isinstance(reason, str):
        return "end_turn"
    if reason.lower() in ("", "stop", "end_turn", "tool_call", "tool_calls"):
        return "end_turn"
    return reason


def _tool_names(attrs: dict[str, Any]) -> list[str]:
    """Names of the tools offered (``gen_ai.tool.definitions`` or OpenInference's)."""
    defs = om.parse_json(attrs.get("gen_ai.tool.definitions"))
    schemas = [om.parse_json(t.get("tool.json_schema")) for t in om.indexed(attrs, "llm.tools")]
    names = []
    for tool in (defs if isinstance(defs, list) else []) + schemas:
        if isinstance(tool, dict):
            inner = om.function_of(tool)
            if isinstance(inner.get("name"), str):
                names.append(inner["name"])
    return names


# -- tool calls ----------------------------------------------------------------------------


def tool_call(span: Span) -> ToolCall:
    """A tool span: name, call id, arguments and result as recorded (a result written as
    a JSON string, as the GenAI conventions ask, is that string)."""
    span = otlp_aisdk.as_genai(span)
    attrs = span.attributes
    name = _first_str(attrs, "gen_ai.tool.name", "tool.name", "traceloop.entity.name")
    call_id = _first_str(attrs, "gen_ai.tool.call.id", "tool_call.id", "tool.id")
    args = _first_present(
        attrs,
        "gen_ai.tool.call.arguments",
        "tool.parameters",
        "input.value",
        "traceloop.entity.input",
    )
    result = _first_present(
        attrs, "gen_ai.tool.call.result", "output.value", "traceloop.entity.output"
    )
    return ToolCall(
        name=name or span.name,
        call_id=call_id,
        arguments=om.parse_json(args) if isinstance(args, str) else args,
        result=_json_string(result),
        error=failure(span),
    )


def _json_string(value: Any) -> Any:
    """``"text"`` (a JSON string literal) -> ``text``; anything else as it is."""
    if isinstance(value, str) and len(value) > 1 and value[0] == value[-1] == '"':
        decoded = om.parse_json(value)
        return decoded if isinstance(decoded, str) else value
    return value


def failure(span: Span) -> str:
    """What went wrong in a span whose status is ERROR, as loom-harness words a tool that
    raised (``ERROR: <type>: <message>``, loom-format §1.5); "" when the span succeeded.
    From the OTel exception conventions: an ``exception`` event with ``exception.type`` /
    ``exception.message``, else ``error.type`` and the status description."""
    if span.status_code != 2:
        return ""
    event = next((e.attributes for e in span.events if e.name == "exception"), {})
    kind = event.get("exception.type") or span.attributes.get("error.type") or ""
    message = event.get("exception.message") or span.status_message or "failed"
    kind = str(kind).rsplit(".", 1)[-1]
    message = str(message)
    if kind and message.startswith(f"{kind}: "):  # some put the type in the description
        message = message[len(kind) + 2 :]
    return f"ERROR: {kind}: {message}" if kind else f"ERROR: {message}"


def _first_present(attrs: dict[str, Any], *keys: str) -> Any:
    return next((attrs[k] for k in keys if k in attrs), None)
