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

from collections import defaultdict
from typing import Any

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.foreign import ForeignReader, RunBuilder
from loom_core.formats.otlp_decode import OtlpDecodeError, Span, decode_file, decode_request
from loom_core.formats.otlp_genai import role_of
from loom_core.formats.otlp_run import build_run, roots_of

__all__ = ["READER", "decode_request", "load_otlp", "spans_to_document", "trace_groups"]

PATTERNS = ("*.otlp.json", "*.otlp.jsonl", "*.otlp.pb")
_PROTO_SUFFIXES = (".otlp.pb", ".pb", ".otlp.proto", ".binpb")


def sniff(head: bytes, path: str) -> bool:
    """OTLP JSON names ``resourceSpans`` near its start; protobuf is told by its name plus
    a successful parse of the head (a truncated head still parses field by field)."""
    if b'"resourceSpans"' in head[:4096] or b'"resource_spans"' in head[:4096]:
        return True
    if path.lower().endswith(_PROTO_SUFFIXES) and head[:1] not in (b"{", b"["):
        try:
            return bool(decode_file(head))
        except OtlpDecodeError:
            return path.lower().endswith(".otlp.pb")  # ours by name: its load names the cause
    return False


def load_otlp(data: bytes, path: str) -> Document:
    """The reader's ``load``: the whole file as a run (:class:`LoadError` when it is not)."""
    try:
        spans = decode_file(bytes(data))
    except OtlpDecodeError as err:
        raise LoadError(path, f"not an OpenTelemetry trace file: {err}") from None
    if not spans:
        raise LoadError(path, "the OpenTelemetry file holds no spans")
    return spans_to_document(spans, path)


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


def spans_to_document(spans: list[Span], path: str, fmt: str = "otlp") -> Document:
    """Normalized spans (of one or many traces) as a loom :class:`Document`; see the module
    docstring for which trace becomes the run. Never raises on odd span content."""
    groups = trace_groups(spans)
    if not groups:
        return RunBuilder().document(path, fmt)
    builder = build_run(groups[0])
    builder.extra["traces"] = [_trace_row(g) for g in groups]
    warnings: tuple[str, ...] = ()
    if len(groups) > 1:
        warnings = (
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


READER = ForeignReader(
    name="otlp",
    label="OpenTelemetry (OTLP)",
    patterns=PATTERNS,
    sniff=sniff,
    load=load_otlp,
)
