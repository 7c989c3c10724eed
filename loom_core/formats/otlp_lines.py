"""An OTLP JSON-lines file read a block of appended lines at a time (a live tab's reader).

Why: the app's own receiver and a collector's file exporter write one JSON request per
line and only append, so a live tab need not decode the lines it already has
(:mod:`loom_core.live.appended`). Each line is decoded once, into its spans and its log
records; the run is built from all of them by the reader's own steps
(:func:`~loom_core.formats.otlp.require_spans`,
:func:`~loom_core.formats.otlp.with_logs_document`), so it is what
:func:`~loom_core.formats.otlp.load_otlp` makes of the same bytes.

A file whose lines do not each decode alone (a pretty-printed request, a line that is
not JSON, protobuf, a byte-order mark) is not line-based: from the first such line on,
the whole load reads the file as it is, its answers and its errors included (no bytes
are kept here for it: the file is read again, as a live tab did before).
"""

from __future__ import annotations

from typing import Any

import msgspec

from loom_core.formats.document import Document
from loom_core.formats.otlp import _TORN, load_otlp, require_spans, with_logs_document
from loom_core.formats.otlp_decode import OtlpDecodeError, Span, from_json_value
from loom_core.formats.otlp_logs import LogRecord, logs_from_json_value
from loom_core.formats.read_file import read_bytes

__all__ = ["AppendedOtlp"]

_decode = msgspec.json.Decoder()
_HEAD = 4096  # what the reader's "logs only?" test looks at


class _NotALine(Exception):
    """A line that does not decode alone: the file is read whole from now on."""


def _decoded(line: bytes) -> tuple[list[Span], list[LogRecord]]:
    """One line's spans and log records (:class:`_NotALine` when it is not one request)."""
    if line[:1] != b"{":  # a BOM, an array, indentation: not one request per line
        raise _NotALine
    try:
        value: Any = _decode.decode(line)
        return from_json_value(value, ids="auto"), logs_from_json_value(value)
    except (msgspec.MsgspecError, RecursionError, OtlpDecodeError):
        raise _NotALine from None


class AppendedOtlp:
    """The OTLP reader's :class:`~loom_core.formats.reader.LineParser`."""

    def __init__(self) -> None:
        self._whole = False  # a line did not decode alone: the whole load reads the file
        self._lines = 0  # non-blank complete lines decoded
        self._spans: list[Span] = []
        self._logs: list[LogRecord] = []
        self._head = b""
        self._says_spans = False  # the key "resourceSpans" occurs in a line

    def add(self, block: bytes) -> None:
        if len(self._head) < _HEAD:
            self._head = (self._head + block)[:_HEAD]
        if self._whole:
            return
        try:
            for line in block.split(b"\n"):
                if line.strip():
                    spans, logs = _decoded(line.strip())
                    self._spans += spans
                    self._logs += logs
                    self._lines += 1
                    self._says_spans = self._says_spans or b"esourceSpans" in line
        except _NotALine:
            self._whole = True
            self._spans, self._logs = [], []

    def document(self, path: str, tail: bytes) -> Document:
        if self._whole or self._lines == 0:  # not line-based, or no line yet: the whole load
            return load_otlp(read_bytes(path), path)
        spans, logs = self._spans, self._logs
        warnings: tuple[str, ...] = ()
        if tail.strip():
            try:
                more, more_logs = _decoded(tail.strip())
                spans, logs = spans + more, logs + more_logs
            except _NotALine:  # the writer has not finished it
                warnings = (_TORN,)
        head = self._head if len(self._head) >= _HEAD else (self._head + tail)[:_HEAD]
        says = self._says_spans or b"esourceSpans" in tail
        require_spans(spans, head, says, path)
        return with_logs_document(spans, logs, path, warnings)
