"""The OTLP/HTTP receiver against the real OpenTelemetry SDK exporter (protobuf, gzip), a
JSON post, and every way a request can be refused (OTLP/HTTP's status codes)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from google.rpc.status_pb2 import Status
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from loom_core.formats.loader import load
from loom_core.live.otlp_body import BodyError, decode
from loom_core.live.otlp_receiver import ReceiverConfig, check_loopback, start_receiver
from tests.core.live.otlp_helpers import (
    otlp_json,
    post,
    running_receiver,
    sdk_tracer,
    stored,
    stored_spans,
)

JSON = "application/json"
PROTO = "application/x-protobuf"


def _two_traces(tracer: object) -> None:
    """Two agent-shaped traces: a root with a model call and a tool call each."""
    for run in ("a", "b"):
        with tracer.start_as_current_span(f"agent {run}"):  # type: ignore[attr-defined]
            with tracer.start_as_current_span("chat fake-1") as chat:  # type: ignore[attr-defined]
                chat.set_attribute("gen_ai.usage.input_tokens", 11)
            with tracer.start_as_current_span("execute_tool ls"):  # type: ignore[attr-defined]
                pass


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_sdk_exporter_spans_are_filed_per_trace(tmp_path: Path, compression: Compression) -> None:
    new: list[str] = []
    with running_receiver(tmp_path / "traces") as rt:
        assert rt.receiver is not None
        rt.store.on_new_trace = lambda trace_id, _path: new.append(trace_id)
        with sdk_tracer(rt.receiver.endpoint, compression) as (tracer, memory):
            _two_traces(tracer)
        sent = memory.get_finished_spans()
    by_trace: dict[str, list[str]] = {}
    for span in sent:
        by_trace.setdefault(f"{span.context.trace_id:032x}", []).append(span.name)
    files = sorted((tmp_path / "traces").iterdir())
    assert [f.name for f in files] == sorted(f"{t}.otlp.jsonl" for t in by_trace)
    assert sorted(new) == sorted(by_trace)  # each trace announced once
    for path in files:
        trace_id = path.name.split(".")[0]
        spans = stored_spans(path)
        assert [s["name"] for s in spans] == by_trace[trace_id]  # one line per export, in order
        assert len(stored(path)) == 3  # SimpleSpanProcessor: one request per ended span
        assert {s["traceId"] for s in spans} == {trace_id}
        sent_ids = {f"{s.context.span_id:016x}" for s in sent}
        assert all(s["spanId"] in sent_ids for s in spans)  # hex, not base64
        root = next(s for s in spans if "parentSpanId" not in s)
        assert all(s.get("parentSpanId") in (None, root["spanId"]) for s in spans)
        resource = stored(path)[0]["resourceSpans"][0]["resource"]["attributes"]
        assert {"key": "service.name", "value": {"stringValue": "otlp-test"}} in resource
        chat = next(s for s in spans if s["name"] == "chat fake-1")
        assert chat["attributes"] == [
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "11"}}
        ]


def test_json_post_and_partial_success(tmp_path: Path) -> None:
    with sdk_tracer(None) as (tracer, memory):
        _two_traces(tracer)
    request = otlp_json(list(memory.get_finished_spans()))
    bad = {"traceId": "not-hex", "spanId": "0102030405060708", "name": "lost"}
    request["resourceSpans"][0]["scopeSpans"][0]["spans"].append(bad)
    with running_receiver(tmp_path) as rt:
        assert rt.receiver is not None
        url = rt.receiver.endpoint + "/v1/traces"
        status, kind, body = post(
            url, gzip.compress(json.dumps(request).encode()), JSON, {"Content-Encoding": "gzip"}
        )
        assert (status, kind) == (200, JSON)
        answer = json.loads(body)["partialSuccess"]
        assert answer["rejectedSpans"] == 1 and "traceId" in answer["errorMessage"]
        status, _, body = post(url, json.dumps(otlp_json([])).encode(), JSON)
        assert (status, json.loads(body)) == (200, {})
    files = sorted(tmp_path.glob("*.otlp.jsonl"))
    assert len(files) == 2
    for path in files:
        (line,) = stored(path)  # the whole batch of that trace on one line
        assert line["resourceSpans"][0]["scopeSpans"][0]["scope"] == {"name": "json-test"}
        assert [s["name"] for s in stored_spans(path)][-1].startswith("agent")


def test_refusals_answer_per_the_spec(tmp_path: Path) -> None:
    with running_receiver(tmp_path, max_body=4096) as rt:
        assert rt.receiver is not None
        url = rt.receiver.endpoint + "/v1/traces"
        status, kind, body = post(url, b"{not json", JSON)
        assert (status, kind) == (400, JSON) and "not JSON" in json.loads(body)["message"]
        status, kind, body = post(url, b"\xff\xff\xff", PROTO)
        assert (status, kind) == (400, PROTO)
        assert "ExportTraceServiceRequest" in Status.FromString(body).message
        assert post(url, b"[1]", JSON)[0] == 400
        assert post(url, b'{"resourceSpans": 5}', JSON)[0] == 400
        assert post(url, b"{}", "text/plain")[0] == 415
        assert post(url, b"{}", JSON, {"Content-Encoding": "br"})[0] == 415
        assert post(url, b"not gzip", JSON, {"Content-Encoding": "gzip"})[0] == 400
        assert post(url, b"{}" + b" " * 5000, JSON)[0] == 413
        bomb = gzip.compress(b"{}" + b" " * 100_000)  # small on the wire, large inflated
        assert post(url, bomb, JSON, {"Content-Encoding": "gzip"})[0] == 413
        assert post(url, b"{}", JSON, {"Host": "evil.example:4318"})[0] == 403
        status, kind, body = post(url, b"", PROTO)  # an empty request is a valid one
        assert (status, kind) == (200, PROTO)
        assert ExportTraceServiceResponse.FromString(body) == ExportTraceServiceResponse()
    assert not list(tmp_path.iterdir())  # nothing was filed


def test_an_existing_file_is_never_written_and_batches_append(tmp_path: Path) -> None:
    with sdk_tracer(None) as (tracer, memory):
        _two_traces(tracer)
    first = memory.get_finished_spans()[0]
    trace_id = f"{first.context.trace_id:032x}"
    theirs = tmp_path / f"{trace_id}.otlp.jsonl"
    theirs.write_text("the user's own file\n")
    mine = [s for s in memory.get_finished_spans() if s.context.trace_id == first.context.trace_id]
    with running_receiver(tmp_path) as rt:
        assert rt.receiver is not None
        url = rt.receiver.endpoint + "/v1/traces"
        for span in mine:  # three batches of one trace
            assert post(url, json.dumps(otlp_json([span])).encode(), JSON)[0] == 200
    assert theirs.read_text() == "the user's own file\n"
    ours = tmp_path / f"{trace_id}-2.otlp.jsonl"
    assert [s["name"] for s in stored_spans(ours)] == [s.name for s in mine]
    assert len(stored(ours)) == 3


def test_refuses_a_non_loopback_host(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a loopback"):
        check_loopback("0.0.0.0")
    assert check_loopback("::1") == "::1" and check_loopback("localhost") == "localhost"
    import asyncio

    with pytest.raises(ValueError):
        asyncio.run(start_receiver(ReceiverConfig(tmp_path / "x", host="192.168.1.2", port=0)))
    assert not (tmp_path / "x").exists()


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=30,
)
_span = st.fixed_dictionaries(
    {
        "traceId": st.one_of(
            st.text(alphabet="0123456789abcdefABCDEF", min_size=32, max_size=32), _json_values
        )
    },
    optional={"spanId": _json_values, "name": _json_values},
)
_request = st.fixed_dictionaries(
    {
        "resourceSpans": st.lists(
            st.fixed_dictionaries(
                {
                    "scopeSpans": st.lists(
                        st.fixed_dictionaries({"spans": st.lists(_span | _json_values, max_size=3)})
                        | _json_values,
                        max_size=3,
                    )
                },
                optional={"resource": _json_values},
            )
            | _json_values,
            max_size=3,
        )
        | _json_values
    }
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_request, _json_values))
def test_any_json_body_is_split_or_refused_with_400(value: object) -> None:
    """Any JSON value: split by trace (every kept span filed under its own id) or a 400."""
    try:
        decoded = decode(json.dumps(value).encode(), JSON)
    except BodyError as err:
        assert err.status == 400 and err.message
        return
    for trace_id, request in decoded.traces.items():
        spans = [
            s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]
        ]
        assert len(spans) == decoded.spans[trace_id] and {s["traceId"] for s in spans} == {trace_id}
        assert len(trace_id) == 32 and trace_id == trace_id.lower() and trace_id != "0" * 32


@pytest.mark.pristine_sdks
def test_an_sdk_only_agent_is_one_run_in_one_file(tmp_path: Path) -> None:
    """OpenInference around the real openai client and no span around the loop: each call
    is a trace of its own; the receiver files them together and the reader sees one run."""
    from tests.core.formats.otlp_agents import run_agent

    with running_receiver(tmp_path) as rt:
        assert rt.receiver is not None
        url = rt.receiver.endpoint + "/v1/traces"
        rec = run_agent("openinference-openai", untraced=(), root=False)
        assert len({s.context.trace_id for s in rec.spans}) == 6  # 3 calls + 3 tool spans
        model_calls = [s for s in rec.spans if s.attributes.get("openinference.span.kind") == "LLM"]
        for span in sorted(rec.spans, key=lambda s: s.end_time or 0):  # as a live agent sends
            status, _, _ = post(
                url, json.dumps(otlp_json([span], resource=span.resource.attributes)).encode(), JSON
            )
            assert status == 200
    (path,) = tmp_path.glob("*.otlp.jsonl")  # (the run library's test files are there too)
    doc = load(path)
    kinds = [e.kind for e in doc.effects]
    assert kinds.count("model") == len(model_calls) == 3
    assert sum(k.startswith("tool:") for k in kinds) == len(rec.tool_calls) == 3


def test_bare_traces_apart_in_time_or_resource_are_separate_runs(tmp_path: Path) -> None:
    from loom_core.live.otlp_store import GROUP_GAP, TraceStore

    now = [0.0]
    store = TraceStore(tmp_path, clock=lambda: now[0])
    store.prepare()

    def bare(trace: int, service: str) -> dict:
        span = {
            "traceId": f"{trace:032x}",
            "spanId": f"{trace:016x}",
            "name": "chat",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}],
        }
        resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
        return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}

    first = store.append(f"{1:032x}", bare(1, "a"), 1)
    assert store.append(f"{2:032x}", bare(2, "a"), 1) == first  # same agent: one run
    assert store.append(f"{3:032x}", bare(3, "b"), 1) != first  # another service
    now[0] += GROUP_GAP + 1
    assert store.append(f"{4:032x}", bare(4, "a"), 1) != first  # a later run
    child = bare(5, "a")
    child["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["parentSpanId"] = "ab" * 8
    assert store.append(f"{5:032x}", child, 1) not in store.files[:3]  # not bare: its own
    assert len(store.files) == 4 and len(store.paths) == 5
