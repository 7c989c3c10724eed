"""What a file of JSON records that no reader claims is, said in words a user can act on.

Why: a file of several JSON values (JSON lines, or pretty-printed objects one after
another) reaches the loom trace reader last, whose honest complaint -- "trailing
characters at line 2" -- names a symptom, not the file. Here the first record is read and
the file described: an OpenTelemetry SDK console-exporter dump (``ConsoleSpanExporter``
prints each span's ``ReadableSpan.to_json()``, pretty-printed: a ``context`` with
``trace_id`` / ``span_id`` and a ``kind`` like ``SpanKind.INTERNAL``) is named, with how to
export OTLP instead; any other kind gets its first record's keys. Used on the error path
only, so it costs nothing when a file opens.
"""

from __future__ import annotations

import json
import re
from typing import Any

_LOOK = 1 << 20  # the first record is looked for in the first MiB
_OBJECT_END = re.compile(rb"\n\}[ \t\r]*(?=\n|$)")  # a pretty-printed object's closing brace
_MULTI = ("trailing characters", "no 'log' member")
CONSOLE_DUMP = (
    "an OpenTelemetry SDK console-exporter dump (ConsoleSpanExporter's span JSON), not "
    "OTLP: export with the OTLP exporter instead (OTLPSpanExporter to "
    "`python -m loom_core otlp-receive`, or a Collector's file exporter) and open that"
)


def describe(data: bytes, cause: str) -> str:
    """A better cause than ``cause`` (the trace reader's) when ``data`` is several JSON
    records; ``cause`` itself otherwise."""
    if not any(m in cause for m in _MULTI):
        return cause
    # a head, not the whole file, stripped: a gigabyte (or a mapping, which has no lstrip)
    # is not copied to read its first MiB
    found = _first_record(data[: 2 * _LOOK].lstrip(b"\xef\xbb\xbf \t\r\n")[:_LOOK])
    if found is None:
        return cause
    record, lines = found
    if _console_span(record):
        return CONSOLE_DUMP
    keys = ", ".join(str(k) for k in list(record)[:8]) + (", …" if len(record) > 8 else "")
    kind = "JSON lines" if lines else "JSON records one after another"
    return f"{kind}, but no format Loom Desktop reads (first record's keys: {keys})"


def _first_record(head: bytes) -> tuple[dict[str, Any], bool] | None:
    """The first record (an object) and whether it is one line; None when it is not
    followed by more, or is no object."""
    line_end = head.find(b"\n")
    first = _object(head[:line_end] if line_end >= 0 else head)
    if first is not None:
        return (first, True) if head[line_end:].strip() and line_end >= 0 else None
    end = _OBJECT_END.search(head)
    if end is None or not head[end.end() :].strip():
        return None
    record = _object(head[: end.end()])
    return None if record is None else (record, False)


def _object(text: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _console_span(record: dict[str, Any]) -> bool:
    context = record.get("context")
    kind = record.get("kind")
    return (
        isinstance(context, dict)
        and "span_id" in context
        and "trace_id" in context
        and isinstance(kind, str)
        and kind.startswith("SpanKind.")
    )
