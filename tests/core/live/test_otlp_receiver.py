"""The OTLP/HTTP receiver against the real OpenTelemetry SDK exporter (protobuf, gzip), a
JSON post, and every way a request can be refused (OTLP/HTTP's status codes)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

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
