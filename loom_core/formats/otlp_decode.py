"""OTLP trace data (JSON or protobuf) decoded into plain, normalized :class:`Span` objects.

Why a module of its own: both the file reader (:mod:`loom_core.formats.otlp`) and the live
OTLP/HTTP receiver need the same decoding, and neither should care which of the two OTLP
encodings arrived. Public entry points: :func:`decode_request` (one request body, as an
HTTP receiver gets it) and :func:`decode_file` (a whole file: one request, one request per
line, or protobuf).

Facts relied on (the OTLP specification, opentelemetry-proto ``docs/specification.md``,
"JSON Protobuf Encoding"; and the OTLP File Exporter spec, ``specs/otel/protocol/file-exporter``):

- OTLP/JSON is protobuf's JSON mapping with lowerCamelCase keys, except that ``traceId``,
  ``spanId`` and ``parentSpanId`` are hex strings, not base64; enums are integers (kind:
  1 internal, 2 server, 3 client, 4 producer, 5 consumer); 64-bit integers (times,
  ``intValue``) may be strings. Some exporters still send base64 ids (plain protobuf JSON
  mapping), and protobuf's parser also accepts the original snake_case names and enum
  names, so we accept all of these.
- A file written per the file-exporter spec is JSON lines, one ``ExportTraceServiceRequest``
  (``TracesData``, the same shape) per line.
- The collector's file exporter with ``format: proto`` writes each message after a 4-byte
  big-endian length; a plain ``.pb`` dump is one serialized request.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import msgspec

from loom_core.formats.otlp_values import (
    OtlpDecodeError,
    attributes,
    get,
    kind_name,
    listed,
    nanos,
    obj,
    span_id,
    status_code,
    type_name,
)

__all__ = ["OtlpDecodeError", "Span", "SpanEvent", "decode_file", "decode_request"]

_json = msgspec.json.Decoder()


@dataclass(frozen=True)
class SpanEvent:
    """A span event (older GenAI conventions put each message in one)."""

    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(frozen=True)
class Span:
    """One span, encoding-free: hex ids, integer nanoseconds, attributes as Python values."""

    trace_id: str
    span_id: str
    parent_id: str  # "" for a root span
    name: str
    kind: str  # "internal", "client", … (see KINDS)
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    status_code: int = 0  # 0 unset, 1 ok, 2 error
    status_message: str = ""
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""

    def record(self) -> dict[str, Any]:
        """The span as a JSON-able dict (what a raw view shows)."""
        return {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "parent_id": self.parent_id,
            "name": self.name,
            "kind": self.kind,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "status": {"code": self.status_code, "message": self.status_message},
            "attributes": self.attributes,
            "events": [
                {"name": e.name, "time_ns": e.time_ns, "attributes": e.attributes}
                for e in self.events
            ],
            "resource": self.resource,
            "scope": self.scope,
        }


def decode_request(body: bytes, content_type: str = "application/json") -> list[Span]:
    """The spans of one ``ExportTraceServiceRequest`` body (``application/json`` or
    ``application/x-protobuf``, as OTLP/HTTP sends them). Raises :class:`OtlpDecodeError`."""
    try:
        if "protobuf" in content_type.lower():
            return _from_proto(bytes(body))
        return _from_json_bytes(bytes(body))
    except RecursionError:  # values nested deeper than the stack allows
        raise OtlpDecodeError("values nested too deeply") from None


def decode_file(data: bytes) -> list[Span]:
    """Every span in an OTLP file: JSON (one request, or one per line) or protobuf (one
    request, or length-prefixed requests). Raises :class:`OtlpDecodeError`."""
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    try:
        return _json_file(stripped) if stripped[:1] in (b"{", b"[") else _proto_file(data)
    except RecursionError:  # values nested deeper than the stack allows
        raise OtlpDecodeError("values nested too deeply") from None


# -- JSON -----------------------------------------------------------------------------------


def _json_file(data: bytes) -> list[Span]:
    try:
        return _from_json_bytes(data)
    except OtlpDecodeError as whole_err:
        lines = [(n, ln) for n, ln in enumerate(data.splitlines(), 1) if ln.strip()]
        if len(lines) < 2:
            raise whole_err from None
    spans: list[Span] = []
    for number, line in lines:
        try:
            spans += _from_json_bytes(line)
        except OtlpDecodeError as err:
            raise OtlpDecodeError(f"line {number}: {err}") from None
    return spans


def _from_json_bytes(data: bytes) -> list[Span]:
    try:
        value = _json.decode(data)
    except msgspec.MsgspecError as err:  # DecodeError, or ValidationError for e.g. 1e400
        raise OtlpDecodeError(f"not JSON ({err})") from None
    except RecursionError:
        raise OtlpDecodeError("JSON nested too deeply") from None
    return from_json_value(value, ids="auto")


def from_json_value(value: Any, ids: str = "auto") -> list[Span]:
    """Spans of a decoded OTLP JSON request, or of a list of them as some tools dump a
    session (``ids``: "auto" reads hex or base64 ids, "base64" only base64, as protobuf's
    own JSON mapping writes them)."""
    if isinstance(value, list) and value:
        return [span for request in value for span in from_json_value(request, ids)]
    if not isinstance(value, dict):
        raise OtlpDecodeError(f"expected an OTLP request object, got {type_name(value)}")
    groups = get(value, "resourceSpans", "resource_spans")
    if groups is None and get(value, "resourceLogs", "resource_logs") is not None:
        return []  # a logs request beside the spans (read by otlp_logs)
    if groups is None:
        raise OtlpDecodeError("no resourceSpans: not OTLP trace data")
    spans: list[Span] = []
    for r_index, group in enumerate(listed(groups, "resourceSpans")):
        where = f"resourceSpans[{r_index}]"
        group = obj(group, where)
        resource = attributes(get(obj(get(group, "resource") or {}, where), "attributes"))
        scope_groups = get(group, "scopeSpans", "scope_spans", "instrumentationLibrarySpans")
        for s_index, scoped in enumerate(listed(scope_groups or [], f"{where}.scopeSpans")):
            swhere = f"{where}.scopeSpans[{s_index}]"
            scoped = obj(scoped, swhere)
            scope_obj = get(scoped, "scope", "instrumentationLibrary") or {}
            scope = obj(scope_obj, swhere).get("name") or ""
            for index, raw in enumerate(listed(get(scoped, "spans") or [], f"{swhere}.spans")):
                spans.append(_span(obj(raw, f"{swhere}.spans[{index}]"), resource, scope, ids))
    return spans


def _span(raw: dict[str, Any], resource: dict[str, Any], scope: Any, ids: str) -> Span:
    status = get(raw, "status") or {}
    status = status if isinstance(status, dict) else {}
    return Span(
        trace_id=span_id(get(raw, "traceId", "trace_id"), ids, "traceId"),
        span_id=span_id(get(raw, "spanId", "span_id"), ids, "spanId"),
        parent_id=span_id(get(raw, "parentSpanId", "parent_span_id"), ids, "parentSpanId"),
        name=str(raw.get("name") or ""),
        kind=kind_name(raw.get("kind")),
        start_ns=nanos(get(raw, "startTimeUnixNano", "start_time_unix_nano"), "startTime"),
        end_ns=nanos(get(raw, "endTimeUnixNano", "end_time_unix_nano"), "endTime"),
        attributes=attributes(raw.get("attributes")),
        events=tuple(_event(e) for e in listed(raw.get("events") or [], "events")),
        status_code=status_code(status.get("code")),
        status_message=str(status.get("message") or ""),
        resource=resource,
        scope=str(scope),
    )


def _event(raw: Any) -> SpanEvent:
    raw = obj(raw, "event")
    return SpanEvent(
        name=str(raw.get("name") or ""),
        time_ns=nanos(get(raw, "timeUnixNano", "time_unix_nano"), "event time"),
        attributes=attributes(raw.get("attributes")),
    )


# -- protobuf -------------------------------------------------------------------------------


def _proto_file(data: bytes) -> list[Span]:
    try:
        return _from_proto(data)
    except OtlpDecodeError as whole_err:
        frames = _length_prefixed(data)
        if frames is None:
            raise whole_err from None
    return [span for frame in frames for span in _from_proto(frame)]


def _length_prefixed(data: bytes) -> list[bytes] | None:
    """``data`` cut at 4-byte big-endian lengths, or None when the lengths do not add up."""
    frames, pos = [], 0
    while pos < len(data):
        if pos + 4 > len(data):
            return None
        (size,) = struct.unpack_from(">I", data, pos)
        if pos + 4 + size > len(data):
            return None
        frames.append(data[pos + 4 : pos + 4 + size])
        pos += 4 + size
    return frames or None


def _from_proto(data: bytes) -> list[Span]:
    # imported here: the generated classes cost ~50 ms, paid only when protobuf is read
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except (DecodeError, RecursionError) as err:
        raise OtlpDecodeError(f"not OTLP protobuf ({err or 'truncated or corrupt'})") from None
    if not request.resource_spans and data.strip():
        raise OtlpDecodeError("not OTLP protobuf (no resource spans)")
    return from_json_value(MessageToDict(request), ids="base64")
