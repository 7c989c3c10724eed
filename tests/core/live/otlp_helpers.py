"""Real OpenTelemetry producers for the receiver's tests: the SDK and its OTLP exporter.

Why the SDK: what the receiver must accept is what real exporters send (protobuf, gzip,
the SDK's id and resource encoding); the spans the SDK kept in memory are the producer's
own account of what it sent, which the stored files are checked against.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from loom_core.live.otlp_receiver import ReceiverConfig
from loom_core.live.otlp_thread import ReceiverThread


@contextmanager
def running_receiver(save: Path, **config: Any) -> Iterator[ReceiverThread]:
    """Our receiver on a free port in its own thread; stopped (and joined) on exit."""
    thread = ReceiverThread(ReceiverConfig(save, port=0, **config))
    thread.start()
    try:
        yield thread
    finally:
        assert thread.stop(), "receiver thread did not stop"


@contextmanager
def sdk_tracer(
    endpoint: str | None, compression: Compression = Compression.NoCompression
) -> Iterator[tuple[Any, InMemorySpanExporter]]:
    """A tracer of a private TracerProvider exporting each ended span at once (the real
    ``OTLPSpanExporter``, protobuf) to ``endpoint`` and to memory (the producer's record)."""
    provider = TracerProvider(resource=Resource.create({"service.name": "otlp-test"}))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    if endpoint is not None:
        exporter = OTLPSpanExporter(
            endpoint=f"{endpoint}/v1/traces", compression=compression, timeout=5
        )
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        yield provider.get_tracer("otlp-test"), memory
    finally:
        provider.shutdown()


def otlp_json(spans: list[ReadableSpan], resource: Any = None) -> dict[str, Any]:
    """The OTLP JSON encoding of ``spans``, written here from the spec (hex ids, string
    int64s, typed attribute values), independent of the receiver's protobuf conversion."""

    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, float):
            return {"doubleValue": v}
        return {"stringValue": str(v)}

    def span(s: ReadableSpan) -> dict[str, Any]:
        ctx = s.get_span_context()
        assert ctx is not None
        out: dict[str, Any] = {
            "traceId": f"{ctx.trace_id:032x}",
            "spanId": f"{ctx.span_id:016x}",
            "name": s.name,
            "kind": s.kind.value + 1,  # SpanKind INTERNAL is 0 in the API, 1 in OTLP
            "startTimeUnixNano": str(s.start_time),
            "endTimeUnixNano": str(s.end_time),
            "attributes": [{"key": k, "value": value(v)} for k, v in (s.attributes or {}).items()],
        }
        if s.parent is not None:
            out["parentSpanId"] = f"{s.parent.span_id:016x}"
        return out

    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [
                        {"key": k, "value": value(v)}
                        for k, v in (resource or {"service.name": "json-test"}).items()
                    ]
                },
                "scopeSpans": [{"scope": {"name": "json-test"}, "spans": [span(s) for s in spans]}],
            }
        ]
    }


def post(
    url: str, body: bytes, content_type: str, headers: dict[str, str] | None = None
) -> tuple[int, str, bytes]:
    """POST ``body``; (status, response content type, response body), errors included."""
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": content_type, **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read()


def stored(path: Path) -> list[dict[str, Any]]:
    """The OTLP JSON requests of one trace file, one per line."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def stored_spans(path: Path) -> list[dict[str, Any]]:
    """Every span of a trace file, in file order."""
    return [
        span
        for request in stored(path)
        for rs in request["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]
