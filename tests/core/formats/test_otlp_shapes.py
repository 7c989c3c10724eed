"""The OTLP reader on shapes beyond one flat agent loop: sub-agents, older conventions,
other file layouts.

Sub-agents are recorded by the real ``openai`` client under OpenLLMetry, the agent code
adding ``invoke_agent`` / ``execute_tool`` spans as the GenAI agent conventions describe.
The older message shapes (per-message span events, OpenLLMetry's indexed ``gen_ai.prompt.N``
attributes) come from instrumentation versions we cannot install next to the current ones,
so those spans are made with the real SDK and encoder with the attributes set by hand,
named exactly as the conventions define them (see loom_core/formats/otlp_messages.py).
"""

from __future__ import annotations

import base64
import json
import os
import struct
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from loom_core.errors import LoadError
from loom_core.formats.loader import load, load_bytes
from loom_core.formats.save import document_dict
from tests.core.formats.otlp_producers import instrumented, request_json, request_proto, write_pb
from tests.core.fuzz.surfaces import build_views
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import OPENAI_KEY, running_upstream

TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("research", "search")
]


def _span(tracer: Any, name: str, attrs: dict[str, Any]) -> Any:
    return tracer.start_as_current_span(name, attributes=attrs)


def _chat(client: openai.OpenAI, messages: list[dict[str, Any]]) -> Any:
    return client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)  # type: ignore[arg-type]


def test_sub_agent_steps_are_one_level_deeper(tmp_path: Path) -> None:
    with instrumented("openllmetry-openai") as (provider, exporter), running_upstream() as up:
        up.script(
            Reply(calls=[("c1", "research", {"topic": "hotels"})], usage=(50, 5)),  # parent
            Reply(calls=[("c2", "search", {"q": "Zürich"})], usage=(30, 4)),  # child
            Reply(text="Storchen is best", usage=(40, 6)),  # child
            Reply(text="Book the Storchen", usage=(70, 8)),  # parent
        )
        tracer = provider.get_tracer("agent")
        client = openai.OpenAI(base_url=up.url + "/v1", api_key=OPENAI_KEY, max_retries=0)
        agent = {"gen_ai.operation.name": "invoke_agent"}
        with _span(tracer, "invoke_agent planner", {**agent, "gen_ai.agent.name": "planner"}):
            parent = [{"role": "user", "content": "Plan my trip"}]
            first = _chat(client, parent).choices[0].message
            tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "research"}
            with _span(tracer, "execute_tool research", {**tool, "gen_ai.tool.call.id": "c1"}):
                with _span(
                    tracer, "invoke_agent researcher", {**agent, "gen_ai.agent.name": "researcher"}
                ):
                    child = [{"role": "user", "content": "Research hotels"}]
                    asked = _chat(client, child).choices[0].message
                    child += _answered(asked, "c2", "Storchen, Widder")
                    answer = _chat(client, child).choices[0].message.content
            parent += _answered(first, "c1", answer)
            _chat(client, parent)
        spans = exporter.get_finished_spans()
    doc = load(write_pb(tmp_path / "nested.otlp.pb", spans))
    steps = [(e.kind, e.depth) for e in doc.effects]
    assert steps == [
        ("model", 0),
        ("model", 1),
        ("tool:search", 1),  # recovered from the child's next input (no tool span)
        ("model", 1),
        ("tool:research", 0),  # the tool that ran the sub-agent ends after it
        ("model", 0),
    ]
    assert [doc.meta(i).agent for i in range(6)] == ["planner"] + ["researcher"] * 3 + [
        "planner"
    ] * 2
    assert doc.episodes == ["Plan my trip"]  # the sub-agent's prompt is not an episode
    assert doc.extra["inputs"][5][-1] == {
        "role": "tool",
        "content": "Storchen is best",
        "tool_call_id": "c1",
    }


def _answered(asked: Any, call_id: str, result: Any) -> list[dict[str, Any]]:
    """The assistant turn that asked for tools and the one tool result, as an agent sends
    them back (``asked``: the SDK's message)."""
    calls = [c.model_dump() for c in asked.tool_calls or []]
    return [
        {"role": "assistant", "tool_calls": calls},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def _hand_made(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Any:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("legacy").start_as_current_span(name, attributes=attrs) as span:
        for event, event_attrs in events:
            span.add_event(event, event_attrs)
    provider.shutdown()
    return exporter.get_finished_spans()


def test_openllmetry_indexed_prompt_attributes(tmp_path: Path) -> None:
    spans = _hand_made(
        "openai.chat",
        {
            "llm.request.type": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.prompt.0.role": "system",
            "gen_ai.prompt.0.content": "Be brief.",
            "gen_ai.prompt.1.role": "user",
            "gen_ai.prompt.1.content": "Weather in Bern?",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.finish_reason": "tool_calls",
            "gen_ai.completion.0.tool_calls.0.id": "w1",
            "gen_ai.completion.0.tool_calls.0.name": "weather",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Bern"}',
            "gen_ai.usage.prompt_tokens": 21,
            "gen_ai.usage.completion_tokens": 7,
            "gen_ai.usage.cache_read_input_tokens": 5,
        },
        [],
    )
    doc = load(write_pb(tmp_path / "legacy.otlp.pb", spans))
    result = doc.result(0)
    assert result["tool_calls"] == [{"id": "w1", "name": "weather", "input": {"city": "Bern"}}]
    assert result["usage"]["input_tokens"] == 21 and result["usage"]["output_tokens"] == 7
    assert result["usage"]["input_tokens_details"]["cached_tokens"] == 5
    assert doc.header.system == "Be brief."
    assert doc.episodes == ["Weather in Bern?"]


def test_per_message_span_events(tmp_path: Path) -> None:
    spans = _hand_made(
        "chat gpt-4o",
        {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"},
        [
            ("gen_ai.system.message", {"content": "Be brief."}),
            ("gen_ai.user.message", {"content": "Weather in Bern?"}),
            (
                "gen_ai.assistant.message",
                {
                    "tool_calls": json.dumps(
                        [{"id": "w1", "function": {"name": "weather", "arguments": "{}"}}]
                    )
                },
            ),
            ("gen_ai.tool.message", {"content": "sunny", "id": "w1"}),
            (
                "gen_ai.choice",
                {"index": 0, "finish_reason": "stop", "message": json.dumps({"content": "Sunny."})},
            ),
        ],
    )
    doc = load(write_pb(tmp_path / "events.otlp.pb", spans))
    assert doc.result(0)["text"] == "Sunny."
    inputs = doc.extra["inputs"][0]
    assert [m["role"] for m in inputs] == ["system", "user", "assistant", "tool"]
    assert inputs[2]["tool_calls"] == [{"id": "w1", "name": "weather", "input": {}}]
    assert inputs[3]["tool_call_id"] == "w1"


def _b64_ids(value: Any) -> Any:
    """Protobuf's own JSON mapping (what some exporters send): base64 ids, snake_case."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("traceId", "spanId", "parentSpanId"):
                item = base64.b64encode(bytes.fromhex(item)).decode()
            snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
            out[snake] = _b64_ids(item)
        return out
    return [_b64_ids(v) for v in value] if isinstance(value, list) else value


def test_other_layouts_of_the_same_trace(tmp_path: Path) -> None:
    spans = _hand_made(
        "chat", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 3}, []
    )
    want = format(spans[0].context.span_id, "016x")
    snake = tmp_path / "snake.otlp.json"
    snake.write_text(json.dumps(_b64_ids(request_json(spans))))
    other = _hand_made("chat", {"gen_ai.operation.name": "chat"}, [])
    protos = [request_proto(spans), request_proto(other), request_proto(spans)]  # one re-sent
    framed = tmp_path / "framed.otlp.pb"  # the collector file exporter's `format: proto`
    framed.write_bytes(b"".join(struct.pack(">I", len(p)) + p for p in protos))
    assert load(snake).extra["records"][0]["span_id"] == want
    listed = tmp_path / "dump.otlp.json"  # a list of requests, as some tools dump a session
    listed.write_text(json.dumps([request_json(spans), request_json(other)], indent=1))
    assert [e.kind for e in load(listed).effects] == ["model", "model"]
    assert [e.kind for e in load(framed).effects] == ["model", "model"]


_KEYS = (
    "gen_ai.operation.name",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.response.finish_reasons",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.result",
    "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.content",
    "gen_ai.completion.0.tool_calls.0.arguments",
    "openinference.span.kind",
    "llm.input_messages.0.message.role",
    "llm.input_messages.0.message.contents.0.message_content.text",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "llm.tools.0.tool.json_schema",
    "llm.token_count.prompt",
    "tool.name",
    "output.value",
    "content",
    "tool_calls",
    "message",
    "id",
    "exception.type",
    "exception.message",
    "gen_ai.prompt",
)
_EVENTS = (
    "gen_ai.user.message",
    "gen_ai.assistant.message",
    "gen_ai.tool.message",
    "gen_ai.choice",
    "gen_ai.content.prompt",
    "exception",
)
_ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
_VALUE = _ANY | _ANY.map(lambda v: json.dumps(v))  # raw, or as the JSON text producers write


def _otlp_value(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {
            "kvlistValue": {
                "values": [{"key": k, "value": _otlp_value(v)} for k, v in value.items()]
            }
        }
    if isinstance(value, list):
        return {"arrayValue": {"values": [_otlp_value(v) for v in value]}}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value if value == value and abs(value) != float("inf") else 0.0}
    return {"stringValue": value} if value is not None else {}


@settings(
    max_examples=int(os.environ.get("OTLP_FUZZ", "40")),
    deadline=None,
    derandomize=not os.environ.get("OTLP_FUZZ"),
    database=None,
)
@given(
    st.lists(st.dictionaries(st.sampled_from(_KEYS), _VALUE, max_size=8), min_size=1, max_size=3)
)
def test_any_value_in_any_attribute_reads_or_is_refused_in_words(
    spans: list[dict[str, Any]],
) -> None:
    """Attribute values are anyone's JSON: a run (odd values shown as they are) or a LoadError.
    Each span is a model call, a tool or an agent unless its drawn attributes say otherwise,
    so every reader of every convention (events included) gets the odd values."""
    roles = ("chat", "execute_tool", "invoke_agent")
    spans = [{"gen_ai.operation.name": roles[i % 3], **attrs} for i, attrs in enumerate(spans)]
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "ab" * 16,
                                "spanId": f"{i + 1:016x}",
                                "startTimeUnixNano": str(i),
                                "attributes": [
                                    {"key": k, "value": _otlp_value(v)} for k, v in attrs.items()
                                ],
                                "status": {"code": 2, "message": "failed"},
                                "events": [
                                    {
                                        "name": name,
                                        "attributes": [
                                            {"key": k, "value": _otlp_value(v)}
                                            for k, v in attrs.items()
                                        ],
                                    }
                                    for name in _EVENTS
                                ],
                            }
                            for i, attrs in enumerate(spans)
                        ]
                    }
                ]
            }
        ]
    }
    try:
        doc = load_bytes(json.dumps(body).encode(), "any.otlp.json")
    except LoadError as err:
        assert err.cause and "\n" not in err.cause
        return
    build_views(doc)
    document_dict(doc)


def test_a_line_still_being_written_is_left_for_later(tmp_path: Path) -> None:
    first = _hand_made("chat", {"gen_ai.operation.name": "chat"}, [])
    second = _hand_made("chat", {"gen_ai.operation.name": "chat"}, [])
    lines = [json.dumps(request_json(s)).encode() for s in (first, second)]
    path = tmp_path / "growing.otlp.jsonl"
    path.write_bytes(lines[0] + b"\n" + lines[1][: len(lines[1]) // 2])
    doc = load(path)
    assert [e.kind for e in doc.effects] == ["model"]
    assert any("last line is incomplete" in w for w in doc.warnings)
    path.write_bytes(lines[0] + b"\n" + lines[1] + b"\n")
    assert [e.kind for e in load(path).effects] == ["model", "model"]


def test_sniffing_big_protobuf_and_escaped_mentions(tmp_path: Path) -> None:
    from loom_core.formats.loader import sniff_format

    attrs = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": "x" * 100_000}
    big = tmp_path / "export.pb"  # a plain .pb name: told by its start, the head is cut
    big.write_bytes(request_proto(_hand_made("chat", attrs, [])))
    assert big.stat().st_size > 100_000 and sniff_format(big) == "otlp"
    framed = tmp_path / "framed.pb"
    framed.write_bytes(struct.pack(">I", big.stat().st_size) + big.read_bytes())
    assert sniff_format(framed) == "otlp"
    other = tmp_path / "model.pb"  # some other protobuf
    other.write_bytes(b"\x08\x96\x01" * 30_000)
    with pytest.raises(LoadError, match="binary data"):  # no reader's: refused from its head
        sniff_format(other)
    trace = tmp_path / "talk.loom.json"  # a loom trace whose text mentions the key
    trace.write_text(json.dumps({"version": 2, "prompt": '{"resourceSpans": []}', "log": []}))
    assert sniff_format(trace) == "trace"


def test_a_failed_call_and_a_tool_that_raised(tmp_path: Path) -> None:
    """The API answers 500 once (the agent retries), a tool raises inside its span: both
    are recorded by the producer as ERROR spans with an exception event."""
    from tests.core.proxy.fake_upstream import api_error

    with instrumented("openinference-openai") as (provider, exporter), running_upstream() as up:
        up.script(
            api_error(500, "api_error", "upstream exploded"),
            Reply(calls=[("s1", "search", {"q": "x"})], usage=(10, 2)),
            Reply(text="gave up", usage=(20, 3)),
        )
        tracer = provider.get_tracer("agent")
        client = openai.OpenAI(base_url=up.url + "/v1", api_key=OPENAI_KEY, max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "find x"}]
        with _span(tracer, "agent", {"openinference.span.kind": "AGENT"}):
            try:
                _chat(client, messages)
            except openai.InternalServerError:
                pass
            asked = _chat(client, messages).choices[0].message
            try:
                tool = {"openinference.span.kind": "TOOL", "tool.name": "search"}
                with _span(tracer, "search", {**tool, "tool_call.id": "s1"}):
                    raise TimeoutError("index offline")
            except TimeoutError as err:
                failed = f"ERROR: TimeoutError: {err}"
            messages += _answered(asked, "s1", failed)
            _chat(client, messages)
        spans = exporter.get_finished_spans()
    doc = load(write_pb(tmp_path / "failed.otlp.pb", spans))
    assert [e.kind for e in doc.effects] == ["model", "model", "tool:search", "model"]
    assert doc.result(0)["stop_reason"] == "error" and doc.result(0)["text"] == ""
    assert doc.result(2) == "ERROR: TimeoutError: index offline"
    from loom_core.views.timeline import F_ERROR, build_timeline

    tl = build_timeline(doc)
    tool_step = next(s for s in range(len(tl)) if tl.kind_name(s) == "tool:search")
    assert tl.flags[tool_step] & F_ERROR
