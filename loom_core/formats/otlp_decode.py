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

import base64
import binascii
import re
import struct
from dataclasses import dataclass, field
from typing import Any

import msgspec

KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_HEX_ID = re.compile(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}")
_json = msgspec.json.Decoder()


class OtlpDecodeError(ValueError):
    """The bytes are not OTLP trace data; ``str(err)`` is the cause, for one line of report."""


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
    if "protobuf" in content_type.lower():
        return _from_proto(bytes(body))
    return _from_json_bytes(bytes(body))


def decode_file(data: bytes) -> list[Span]:
    """Every span in an OTLP file: JSON (one request, or one per line) or protobuf (one
    request, or length-prefixed requests). Raises :class:`OtlpDecodeError`."""
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped[:1] == b"{":
        return _json_file(stripped)
    return _proto_file(data)


# -- JSON -----------------------------------------------------------------------------------


def _json_file(data: bytes) -> list[Span]:
    try:
        return _from_json_bytes(data)
    except OtlpDecodeError as whole_err:
        lines = [ln for ln in data.splitlines() if ln.strip()]
        if len(lines) < 2:
            raise whole_err from None
    spans: list[Span] = []
    for number, line in enumerate(data.splitlines(), 1):
        if line.strip():
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
    """Spans of a decoded OTLP JSON request (``ids``: "auto" reads hex or base64 ids,
    "base64" only base64, as protobuf's own JSON mapping writes them)."""
    if not isinstance(value, dict):
        raise OtlpDecodeError(f"expected an OTLP request object, got {_type(value)}")
    groups = _get(value, "resourceSpans", "resource_spans")
    if groups is None:
        raise OtlpDecodeError("no resourceSpans: not OTLP trace data")
    spans: list[Span] = []
    for r_index, group in enumerate(_list(groups, "resourceSpans")):
        where = f"resourceSpans[{r_index}]"
        group = _obj(group, where)
        resource = attributes(_get(_obj(_get(group, "resource") or {}, where), "attributes"))
        scope_groups = _get(group, "scopeSpans", "scope_spans", "instrumentationLibrarySpans")
        for s_index, scoped in enumerate(_list(scope_groups or [], f"{where}.scopeSpans")):
            swhere = f"{where}.scopeSpans[{s_index}]"
            scoped = _obj(scoped, swhere)
            scope_obj = _get(scoped, "scope", "instrumentationLibrary") or {}
            scope = _obj(scope_obj, swhere).get("name") or ""
            for index, raw in enumerate(_list(_get(scoped, "spans") or [], f"{swhere}.spans")):
                spans.append(_span(_obj(raw, f"{swhere}.spans[{index}]"), resource, scope, ids))
    return spans


def _span(raw: dict[str, Any], resource: dict[str, Any], scope: Any, ids: str) -> Span:
    status = _get(raw, "status") or {}
    status = status if isinstance(status, dict) else {}
    return Span(
        trace_id=_id(_get(raw, "traceId", "trace_id"), ids, "traceId"),
        span_id=_id(_get(raw, "spanId", "span_id"), ids, "spanId"),
        parent_id=_id(_get(raw, "parentSpanId", "parent_span_id"), ids, "parentSpanId"),
        name=str(raw.get("name") or ""),
        kind=_kind(raw.get("kind")),
        start_ns=_nanos(_get(raw, "startTimeUnixNano", "start_time_unix_nano"), "startTime"),
        end_ns=_nanos(_get(raw, "endTimeUnixNano", "end_time_unix_nano"), "endTime"),
        attributes=attributes(raw.get("attributes")),
        events=tuple(_event(e) for e in _list(raw.get("events") or [], "events")),
        status_code=_status_code(status.get("code")),
        status_message=str(status.get("message") or ""),
        resource=resource,
        scope=str(scope),
    )


def _event(raw: Any) -> SpanEvent:
    raw = _obj(raw, "event")
    return SpanEvent(
        name=str(raw.get("name") or ""),
        time_ns=_nanos(_get(raw, "timeUnixNano", "time_unix_nano"), "event time"),
        attributes=attributes(raw.get("attributes")),
    )


def attributes(raw: Any) -> dict[str, Any]:
    """OTLP ``KeyValue`` list → dict of Python values (entries of a wrong shape skipped)."""
    out: dict[str, Any] = {}
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"))
    return out


def any_value(raw: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (unknown shapes kept as they are)."""
    if not isinstance(raw, dict) or len(raw) != 1:
        return None if raw in ({}, None) else raw
    ((name, value),) = raw.items()
    if name in ("stringValue", "string_value", "boolValue", "bool_value"):
        return value
    if name in ("intValue", "int_value"):
        return _int(value, value)
    if name in ("doubleValue", "double_value"):
        return float(value) if isinstance(value, (int, float, str)) and _floaty(value) else value
    if name in ("arrayValue", "array_value"):
        values = value.get("values") if isinstance(value, dict) else None
        return [any_value(v) for v in values or []]
    if name in ("kvlistValue", "kvlist_value"):
        return attributes(value.get("values") if isinstance(value, dict) else None)
    if name in ("bytesValue", "bytes_value"):
        return value  # base64 text; no GenAI attribute uses bytes
    return raw


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


# -- small helpers --------------------------------------------------------------------------


def _get(obj: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in obj:
            return obj[name]
    return None


def _type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    names |= {int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OtlpDecodeError(f"{where} is {_type(value)}, not an object")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise OtlpDecodeError(f"{where} is {_type(value)}, not a list")
    return value


def _id(value: Any, ids: str, where: str) -> str:
    """A span/trace id as lowercase hex ("" when absent)."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        raise OtlpDecodeError(f"{where} is {_type(value)}, not a hex id string")
    if ids == "auto" and _HEX_ID.fullmatch(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise OtlpDecodeError(f"{where} {value[:40]!r} is neither hex nor base64") from None
    return raw.hex()


def _int(value: Any, default: Any) -> Any:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return default
    return default


def _floaty(value: Any) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _nanos(value: Any, where: str) -> int:
    if value is None:
        return 0
    number = _int(value, None)
    if not isinstance(number, int):
        raise OtlpDecodeError(f"{where} {str(value)[:40]!r} is not a number of nanoseconds")
    return number


def _kind(value: Any) -> str:
    if isinstance(value, str):  # an enum name, as protobuf's JSON mapping may write it
        return value.removeprefix("SPAN_KIND_").lower() or "unspecified"
    number = int(_int(value, 0))
    return KINDS.get(number, str(number))


def _status_code(value: Any) -> int:
    if isinstance(value, str):
        value = {"STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(value, value)
    return int(_int(value, 0))
