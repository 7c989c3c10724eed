"""OpenTelemetry traces of agent runs (OTLP JSON or protobuf files) read as loom runs.

Why a trace becomes one run this way: a loom run is a sequence of model and tool steps with
a depth for sub-agents, so the span tree is flattened into its GenAI steps (model calls and
tool executions, see :mod:`loom_core.formats.otlp_genai`) in start-time order, and every
agent span below the outermost one adds one depth. A model call's requested tool calls that
no tool span recorded still appear as tool steps when the next call's input messages hold
their results. Everything the loom trace has no member for travels in ``Document.extra``:
``inputs`` (model seq -> the messages that call was sent, when recorded), ``records`` (seq
-> the span), ``content_recorded``, ``tree`` (the whole span tree) and ``traces`` (every
trace in the file).

Which trace: a file may hold many (a collector writes everything it gets). Spans are grouped
by trace id; traces whose root is itself a bare model or tool call (an agent loop that
instrumented only its SDK client makes one such trace per call) are read together as one
run. The run shown is the earliest group; ``extra["traces"]`` lists them all and a warning
says how many were left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.foreign import SNIFF_BYTES, RunBuilder
from loom_core.formats.otlp_decode import OtlpDecodeError, Span, decode_file, decode_request
from loom_core.formats.otlp_genai import role_of
from loom_core.formats.otlp_logs import LogRecord, decode_logs, join_logs, sibling_logs
from loom_core.formats.otlp_run import build_run, roots_of
from loom_core.formats.read_file import read_bytes

__all__ = ["decode_request", "load_otlp", "spans_to_document", "trace_groups"]

PATTERNS = ("*.otlp.json", "*.otlp.jsonl", "*.otlp.pb")
_PROTO_SUFFIXES = (".otlp.pb", ".pb", ".otlp.proto", ".binpb")


_JSON_KEY = re.compile(rb'"resource_?([sS]pans|[lL]ogs)"\s*:')
_TORN = "the last line is incomplete (still being written?); read up to the line before it"


def sniff(head: bytes, path: str) -> bool:
    """OTLP JSON has the key ``resourceSpans`` near its start (not just the word: an escaped
    mention inside a string does not count); protobuf is told by a ``.pb`` name plus the
    start of an ``ExportTraceServiceRequest`` -- or a whole parse when the head is the file."""
    if _JSON_KEY.search(head[:4096]):
        return True
    name = path.lower()
    if not name.endswith(_PROTO_SUFFIXES) or head[:1] in (b"{", b"["):
        return False
    if len(head) < SNIFF_BYTES:  # the whole file: parse it
        try:
            return bool(decode_file(head)) or name.endswith(".otlp.pb")
        except OtlpDecodeError:
            return name.endswith(".otlp.pb")  # ours by name: its load names the cause
    return _request_start(head) or _request_start(head[4:]) or name.endswith(".otlp.pb")


def _request_start(data: bytes) -> bool:
    """``data`` starts like a serialized request: field 1 (resource_spans, length-delimited,
    tag 0x0A), a varint length, then a ResourceSpans field (resource, scope_spans or
    schema_url: tags 0x0A, 0x12, 0x1A) -- the protobuf wire format's tag = field << 3 | 2."""
    if data[:1] != b"\x0a":
        return False
    pos = 1
    while pos < min(len(data), 11) and data[pos] & 0x80:  # the varint's continuation bytes
        pos += 1
    return data[pos + 1 : pos + 2] in (b"\x0a", b"\x12", b"\x1a")


def load_otlp(data: bytes, path: str) -> Document:
    """The reader's ``load``: the whole file as a run (:class:`LoadError` when it is not),
    with the GenAI log records in it and in a logs export beside it (:mod:`.otlp_logs`).

    A JSON-lines file still being written (the receiver's, a collector's) may end in half a
    line: the lines before it are read and a warning says so, as for a loom journal."""
    data = bytes(data)
    warnings: tuple[str, ...] = ()
    try:
        spans = decode_file(data)
    except OtlpDecodeError as err:
        cut = data.rfind(b"\n")
        if data.lstrip()[:1] != b"{" or data.endswith(b"\n") or cut < 0:
            raise LoadError(path, f"not an OpenTelemetry trace file: {err}") from None
        try:
            spans, warnings = decode_file(data[: cut + 1]), (_TORN,)
        except OtlpDecodeError:
            raise LoadError(path, f"not an OpenTelemetry trace file: {err}") from None
    require_spans(spans, data[:4096], b"esourceSpans" in data, path)
    try:
        logs = decode_logs(data)
    except OtlpDecodeError as err:
        logs, warnings = [], warnings + (f"its log records could not be read: {err}",)
    return with_logs_document(spans, logs, path, warnings)


def require_spans(spans: list[Span], head: bytes, says_spans: bool, path: str) -> None:
    """``LoadError`` for a file without spans (``head``: its first 4 KiB; ``says_spans``:
    whether the key ``resourceSpans`` occurs in it), naming a logs-only export as such."""
    if not spans and _JSON_KEY.search(head) and not says_spans:
        raise LoadError(path, _LOGS_ONLY)
    if not spans:
        raise LoadError(path, "the OpenTelemetry file holds no spans")


def with_logs_document(
    spans: list[Span], logs: list[LogRecord], path: str, warnings: tuple[str, ...]
) -> Document:
    """The run of ``spans`` with the file's GenAI log records ``logs`` and those of a logs
    export beside it joined (:mod:`.otlp_logs`)."""
    spans, more = _with_logs(spans, logs, path)
    return spans_to_document(spans, path, warnings=warnings + more)


_LOGS_ONLY = (
    "OpenTelemetry logs, no spans: open the traces file they belong to "
    "(X.otlp.json reads the logs in X.logs.otlp.json beside it)"
)


def _with_logs(
    spans: list[Span], logs: list[LogRecord], path: str
) -> tuple[list[Span], tuple[str, ...]]:
    """``spans`` with the GenAI log records of the file and of its logs export joined."""
    warnings: tuple[str, ...] = ()
    logs = list(logs)
    for other in sibling_logs(path):
        try:
            logs += decode_logs(read_bytes(other), protobuf=other.endswith(".pb"))
        except (OtlpDecodeError, LoadError) as err:
            warnings += (f"the logs in {other} could not be read: {err}",)
    if not logs:
        return spans, warnings
    spans, lost = join_logs(spans, logs)
    if lost:
        warnings += (f"{lost} GenAI log record(s) match no model call; not shown",)
    return spans, warnings


def trace_groups(spans: list[Span]) -> list[list[Span]]:
    """Spans as runs, earliest first: one per trace, bare model/tool-call traces together."""
    unique = {(s.trace_id, s.span_id): s for s in spans}  # a re-sent batch: the last copy
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in unique.values():
        by_trace[span.trace_id].append(span)
    runs: list[list[Span]] = []
    loose: list[Span] = []
    for members in by_trace.values():
        if all(_bare_step(root) for root in roots_of(members)):
            loose += members
        else:
            runs.append(members)
    if loose:
        runs.append(loose)
    return sorted(runs, key=lambda g: min(s.start_ns for s in g))


def _bare_step(span: Span) -> bool:
    return role_of(span) in ("model", "tool")


def spans_to_document(
    spans: list[Span], path: str, fmt: str = "otlp", warnings: tuple[str, ...] = ()
) -> Document:
    """Normalized spans (of one or many traces) as a loom :class:`Document`; see the module
    docstring for which trace becomes the run. Never raises on odd span content."""
    groups = trace_groups(spans)
    if not groups:
        return RunBuilder().document(path, fmt, warnings)
    problems: list[str] = []
    builder = build_run(groups[0], problems)
    warnings += tuple(problems)
    builder.extra["traces"] = [_trace_row(g) for g in groups]
    if len(groups) > 1:
        warnings += (
            f"the file holds {len(groups)} runs (traces); showing the earliest, "
            f"{len(groups) - 1} more listed in the raw view",
        )
    return builder.document(path, fmt, warnings)


def _trace_row(group: list[Span]) -> dict[str, Any]:
    roots = roots_of(group)
    return {
        "trace_ids": sorted({s.trace_id for s in group}),
        "name": roots[0].name if roots else "",
        "start_ns": min(s.start_ns for s in group),
        "spans": len(group),
    }
