"""GenAI content written as OTLP log records, joined to the model calls it belongs to.

Why: the GenAI conventions' event form puts each prompt and completion in a log record
(``gen_ai.user.message``, ``gen_ai.choice`` …: the event name in the record's
``eventName``, or an ``event.name`` attribute in older SDKs; the content in its body), not
on the span. OpenLLMetry does so with ``use_legacy_attributes=False``. Without them a run
has its steps and tokens but no answer. The records come in a logs export beside the
traces (``X.logs.otlp.json`` / ``.jsonl`` / ``.pb`` next to ``X.otlp.*``), as
``resourceLogs`` lines in the traces file itself (a Collector's file exporter), or through
the receiver's ``POST /v1/logs``.

Joining: a record carries the trace and span id that were current when it was emitted.
When that span is a model call, the record is one of its events. OpenLLMetry's Anthropic
instrumentation does not make its span current, and a streamed OpenAI reply's choice is
emitted after the span left the context: those records carry another span's id, or none;
they are joined by time, to the model call (in their trace, when they have one) whose span
was open when they were emitted -- the latest-started one, the innermost report.
Facts: OTLP logs data model (opentelemetry-proto ``logs/v1/logs.proto``: ``LogRecord``
``time_unix_nano``, ``observed_time_unix_nano``, ``body``, ``trace_id``, ``span_id``,
``event_name``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from loom_core.formats.otlp_decode import Span, SpanEvent
from loom_core.formats.otlp_genai import role_of
from loom_core.formats.otlp_values import (
    OtlpDecodeError,
    any_value,
    attributes,
    get,
    listed,
    nanos,
    obj,
    span_id,
)

_json = msgspec.json.Decoder()
_HAS_LOGS = re.compile(rb'"resource_?[lL]ogs"')
LOG_SUFFIXES = (".logs.otlp.json", ".logs.otlp.jsonl", ".logs.otlp.pb")
_TRACE_SUFFIXES = (".otlp.json", ".otlp.jsonl", ".otlp.pb")


@dataclass(frozen=True)
class LogRecord:
    """One log record: where it was emitted (ids, time), its event name and body."""

    trace_id: str
    span_id: str
    time_ns: int
    name: str
    body: Any


def sibling_logs(path: str) -> list[str]:
    """The logs exports beside a traces file ``X.otlp.*`` that exist: ``X.logs.otlp.*``."""
    name = Path(path).name
    stem = next((name[: -len(s)] for s in _TRACE_SUFFIXES if name.endswith(s)), None)
    if stem is None or stem.endswith(".logs"):
        return []
    here = Path(path).parent
    return [str(here / (stem + s)) for s in LOG_SUFFIXES if (here / (stem + s)).is_file()]


def decode_logs(data: bytes, protobuf: bool = False) -> list[LogRecord]:
    """Every log record in ``data``: OTLP JSON (one request, or one per line, maybe mixed
    with trace lines) or, with ``protobuf``, one ``ExportLogsServiceRequest``."""
    if protobuf:
        return _from_proto(data)
    if not _HAS_LOGS.search(data):
        return []
    try:
        values = [_json.decode(data)]
    except (msgspec.MsgspecError, RecursionError):
        values = [_line(ln) for ln in data.splitlines() if _HAS_LOGS.search(ln)]
    return [r for v in values for r in logs_from_json_value(v)]


def _line(line: bytes) -> Any:
    try:
        return _json.decode(line)
    except (msgspec.MsgspecError, RecursionError):
        return None  # a torn or bad line: its spans' reader names it


def logs_from_json_value(value: Any, ids: str = "auto") -> list[LogRecord]:
    """The log records of a decoded OTLP JSON request (none when it holds no logs)."""
    if not isinstance(value, dict):
        return []
    out: list[LogRecord] = []
    for group in listed(get(value, "resourceLogs", "resource_logs") or [], "resourceLogs"):
        scoped_groups = get(obj(group, "resourceLogs"), "scopeLogs", "scope_logs") or []
        for scoped in listed(scoped_groups, "scopeLogs"):
            records = get(obj(scoped, "scopeLogs"), "logRecords", "log_records") or []
            out += [_record(obj(r, "logRecord"), ids) for r in listed(records, "logRecords")]
    return out


def _record(raw: dict[str, Any], ids: str) -> LogRecord:
    attrs = attributes(raw.get("attributes"))
    when = nanos(get(raw, "timeUnixNano", "time_unix_nano"), "log time")
    name = get(raw, "eventName", "event_name") or attrs.get("event.name") or ""
    return LogRecord(
        trace_id=span_id(get(raw, "traceId", "trace_id"), ids, "traceId"),
        span_id=span_id(get(raw, "spanId", "span_id"), ids, "spanId"),
        time_ns=when or nanos(get(raw, "observedTimeUnixNano", "observed_time_unix_nano"), "log"),
        name=str(name),
        body=any_value(raw.get("body")),
    )


def _from_proto(data: bytes) -> list[LogRecord]:
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(data)
    except (DecodeError, RecursionError) as err:
        raise OtlpDecodeError(f"not OTLP logs protobuf ({err or 'truncated'})") from None
    return logs_from_json_value(MessageToDict(request), ids="base64")


def join_logs(spans: list[Span], logs: list[LogRecord]) -> tuple[list[Span], int]:
    """``spans`` with each GenAI log record added to its model call's events (see the
    module docstring), and how many GenAI records no model call could take."""
    models = [s for s in spans if role_of(s) == "model"]
    by_id = {s.span_id: s for s in models}
    added: dict[str, list[SpanEvent]] = {}
    lost = 0
    for record in sorted(logs, key=lambda r: r.time_ns):
        if not record.name.startswith("gen_ai.") or _tools_only(record):
            continue
        span = by_id.get(record.span_id) or _open_at(models, record)
        if span is None:
            lost += 1
            continue
        body = record.body if isinstance(record.body, dict) else {"content": record.body}
        added.setdefault(span.span_id, []).append(SpanEvent(record.name, record.time_ns, body))
    out = [
        dataclasses.replace(s, events=s.events + tuple(added[s.span_id]))
        if s.span_id in added
        else s
        for s in spans
    ]
    return out, lost


def _open_at(models: list[Span], record: LogRecord) -> Span | None:
    """The model span open when ``record`` was emitted (in its trace, if it has one)."""
    open_then = [
        s
        for s in models
        if s.start_ns <= record.time_ns <= s.end_ns
        and (not record.trace_id or s.trace_id == record.trace_id)
    ]
    return max(open_then, key=lambda s: s.start_ns, default=None)


def _tools_only(record: LogRecord) -> bool:
    """OpenLLMetry sends the tools offered as a user message ``{"tools": [...]}``: no turn."""
    body = record.body if isinstance(record.body, dict) else {}
    content = body.get("content")
    return isinstance(content, dict) and set(content) == {"tools"}
