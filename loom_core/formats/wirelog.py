"""Read a proxy's ``.wirelog`` (one exchange per line, §6.6) as a proxy trace.

Like loom-harness's crash recovery, a line that does not parse is skipped
wherever it is, so every completed exchange of a killed proxy is recovered.
"""

from __future__ import annotations

import msgspec

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.wire import WireRecorder

_generic = msgspec.json.Decoder()


def wirelog_recorder(data: bytes) -> tuple[WireRecorder, int]:
    """Replay every parseable exchange into a recorder; also count skipped lines."""
    from pydantic import ValidationError  # here: opening a trace must not import pydantic

    from loom_core.formats.schema import WirelogLine

    recorder = WireRecorder()
    skipped = 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            exchange = WirelogLine.model_validate(_generic.decode(line))
        except (msgspec.DecodeError, ValidationError, RecursionError):
            skipped += 1  # like loom: an unreadable line is skipped wherever it is
            continue
        try:
            recorder.record(exchange.request, exchange.response, exchange.shield_events)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError):
            skipped += 1  # parsed, but not shaped like any dialect: as unreadable as junk
    return recorder, skipped


def load_wirelog_bytes(data: bytes, path: str) -> Document:
    """Parse a wirelog into a :class:`Document` shaped like the trace it would become."""
    recorder, skipped = wirelog_recorder(data)
    if not recorder.wire:
        raise LoadError(path, "not a loom wirelog (no complete exchange)")
    return recorded_document(recorder, path, "wirelog", skipped)


def recorded_document(recorder: WireRecorder, path: str, fmt: str, skipped: int) -> Document:
    """The trace a replayed recorder would write, as a :class:`Document` of format ``fmt``
    (a wirelog or an exchange sidecar), with its unreadable lines counted as torn."""
    from loom_core.formats.trace import (
        load_trace_bytes,  # the trace form is the one we already parse
    )

    trace = load_trace_bytes(msgspec.json.encode(recorder.to_trace()), path)
    warnings = (f"{skipped} unreadable line(s) skipped",) if skipped else ()
    return Document(
        path=path,
        format=fmt,
        header=trace.header,
        effects=trace.effects,
        entries=trace.entries,
        wire=trace.wire,
        source=trace.source,
        torn=bool(skipped),
        warnings=warnings,
    )
