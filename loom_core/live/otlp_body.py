"""One OTLP/HTTP trace export request, decoded and split by trace: what the receiver stores.

Why the receiver stores OTLP JSON whatever it was sent: one line per request in a
``<trace_id>.otlp.jsonl`` file is a format the OTLP file reader already reads, a person
can grep, and any OTel tool can replay; protobuf bodies are turned into the OTLP JSON
encoding the spec defines (lowerCamelCase field names, enums as integers, trace and
span ids as hex -- not the base64 the generic protobuf JSON mapping gives bytes).

Facts from the OTLP specification (opentelemetry-proto, ``docs/specification.md``,
"OTLP/HTTP"): ``POST /v1/traces`` with ``application/x-protobuf`` or
``application/json``, optionally ``Content-Encoding: gzip``; a body that cannot be
decoded is answered 400 with a ``google.rpc.Status`` in the request's encoding; spans
the server rejects (here: spans without a usable trace id, which could not be filed)
are counted in the response's ``partial_success``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

JSON = "application/json"
PROTOBUF = "application/x-protobuf"
_HEX_ID = re.compile(r"[0-9a-f]{32}")
_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


class BodyError(Exception):
    """A request the receiver answers with ``status`` (400, 413, 415) and ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Signal:
    """The member names of one OTLP signal's request (traces or logs)."""

    resource: str
    scope: str
    items: str
    message: type[Message]


SPANS = Signal("resourceSpans", "scopeSpans", "spans", ExportTraceServiceRequest)
LOGS = Signal("resourceLogs", "scopeLogs", "logRecords", ExportLogsServiceRequest)


@dataclass
class Decoded:
    """A request split by trace: ``traces[trace_id]`` is an OTLP JSON request holding only
    that trace's spans or log records (resource and scope kept); ``rejected`` spans had no
    usable id. Log records without a trace id (emitted with no span current) are kept
    under the trace id ""."""

    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    spans: dict[str, int] = field(default_factory=dict)  # spans (or log records) per trace id
    rejected: int = 0
    problem: str = ""


def media_type(content_type: str) -> str:
    """``application/json`` for ``application/json; charset=utf-8``: what the body is."""
    return content_type.split(";", 1)[0].strip().lower()


def inflate(body: bytes, encoding: str, limit: int) -> bytes:
    """The body without its ``Content-Encoding``; at most ``limit`` bytes once inflated
    (0: no cap), so a small gzip bomb cannot fill memory."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise BodyError(415, f"unsupported Content-Encoding {encoding!r} (gzip or deflate)")
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    try:
        out = inflater.decompress(body, limit + 1 if limit else 0)
    except zlib.error as err:
        raise BodyError(400, f"body is not valid {encoding}: {err}") from None
    if limit and len(out) > limit:
        raise BodyError(413, f"body is larger than {limit} bytes once decompressed")
    if encoding == "gzip" and not inflater.eof:
        raise BodyError(400, "body is truncated gzip")
    return out


def decode(body: bytes, content_type: str, signal: Signal = SPANS) -> Decoded:
    """Parse an export request (already inflated) and split it by trace id."""
    kind = media_type(content_type)
    if kind == PROTOBUF:
        request = _from_protobuf(body, signal)
    elif kind == JSON:
        request = _from_json(body)
    else:
        raise BodyError(415, f"unsupported Content-Type {content_type!r} ({PROTOBUF} or {JSON})")
    return split(request, signal)


def _from_protobuf(body: bytes, signal: Signal) -> dict[str, Any]:
    message = signal.message()
    try:
        message.ParseFromString(body)
    except DecodeError as err:
        name = signal.message.__name__
        raise BodyError(400, f"body is not an {name}: {err}") from None
    request: dict[str, Any] = json_format.MessageToDict(message, use_integers_for_enums=True)
    for rs in request.get(signal.resource, []):
        for ss in rs.get(signal.scope, []):
            for item in ss.get(signal.items, []):
                _hex_ids(item)
                for link in item.get("links", []):
                    _hex_ids(link)
    return request


def _hex_ids(item: dict[str, Any]) -> None:
    """OTLP JSON writes ids as hex; the generic protobuf mapping wrote base64."""
    for name in _ID_FIELDS:
        if isinstance(item.get(name), str):
            item[name] = base64.b64decode(item[name]).hex()


def _from_json(body: bytes) -> dict[str, Any]:
    try:
        request = json.loads(body)
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        raise BodyError(400, f"body is not JSON: {err}") from None
    if not isinstance(request, dict):
        raise BodyError(400, f"body is a JSON {type(request).__name__}, not an object")
    return request


def _list_of_objects(value: Any, what: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise BodyError(400, f"{what} is not a list of objects")
    return value


def trace_id_of(span: dict[str, Any]) -> str | None:
    """The span's trace id as 32 lowercase hex digits, or None when it has none usable
    (missing, not hex, or all zeros, which the spec calls invalid)."""
    value = span.get("traceId")
    if not isinstance(value, str):
        return None
    text = value.lower()
    if not _HEX_ID.fullmatch(text):
        try:  # some producers send base64 in JSON anyway
            text = base64.b64decode(value, validate=True).hex()
        except (binascii.Error, ValueError):
            return None
        if not _HEX_ID.fullmatch(text):
            return None
    return None if text == "0" * 32 else text


def split(request: dict[str, Any], signal: Signal = SPANS) -> Decoded:
    """Group the request's spans (or log records) by trace; each group keeps its resource
    and scope."""
    out = Decoded()
    for rs in _list_of_objects(request.get(signal.resource), signal.resource):
        by_trace: dict[str, list[dict[str, Any]]] = {}
        for ss in _list_of_objects(rs.get(signal.scope), signal.scope):
            groups: dict[str, list[dict[str, Any]]] = {}
            for item in _list_of_objects(ss.get(signal.items), signal.items):
                trace_id = trace_id_of(item)
                if trace_id is None and signal is SPANS:
                    out.rejected += 1
                    continue
                trace_id = trace_id or ""
                groups.setdefault(trace_id, []).append({**item, "traceId": trace_id})
            for trace_id, items in groups.items():
                scope = {k: v for k, v in ss.items() if k != signal.items}
                by_trace.setdefault(trace_id, []).append({**scope, signal.items: items})
                out.spans[trace_id] = out.spans.get(trace_id, 0) + len(items)
        for trace_id, scopes in by_trace.items():
            resource = {k: v for k, v in rs.items() if k != signal.scope}
            request_of = out.traces.setdefault(trace_id, {signal.resource: []})
            request_of[signal.resource].append({**resource, signal.scope: scopes})
    if out.rejected:
        out.problem = f"{out.rejected} span(s) without a valid traceId were not stored"
    return out
