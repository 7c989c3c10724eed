"""Open a document head-first, for a window that must show something within a second.

Why: a 130 MB trace takes about a second to decode and index. The GUI shows the
first few hundred steps from a cheap partial parse, then swaps in the whole run
when it is ready. The full decode goes entry by entry in chunks so progress can
be reported, cancellation honoured, and the interpreter lock released between
chunks (a single multi-hundred-millisecond C call would freeze the window).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast

import msgspec
import numpy as np

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.gc_pause import gc_paused
from loom_core.formats.lazy_effects import ENTRY_SEP, LazyEffects, log_decoder
from loom_core.formats.loader import TRACE, opened, read_bytes
from loom_core.formats.mapped_file import MappedFile, map_file, release_pages, writing
from loom_core.formats.memory_room import (
    LAYOUT_PEAK_PER_BYTE,
    MAPPED_PEAK_PER_BYTE,
    check_room,
    out_of_memory,
)
from loom_core.formats.reader import BOM, Opening, check_utf8
from loom_core.formats.structs import TraceHeader
from loom_core.formats.tolerant import nesting_cause
from loom_core.formats.trace import assemble, decode_entries, parse_top, with_problems
from loom_core.formats.unknown_json import describe
from loom_core.views.timeline import Timeline, TimelineBuilder, build_timeline

HEAD_ENTRIES = 400
CHUNK = 4000
SMALL_BYTES = 4 << 20  # below this a plain load is fast enough to skip the head
HEAD_BYTES = 8 << 20  # read for the first screen before the whole file is
SCAN_WINDOW = 8 << 20  # bytes searched per call while looking for the log's end
# a layout chunk ends at the first entry boundary past this size; each chunk is one decode
# holding the interpreter lock (1-2 ms at 1 MB), which the window waits out every time it
# takes the lock back (at 4 MB: stalls of 40-60 ms while a big run loaded)
CHUNK_BYTES = 1 << 20
_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])
# runs of layout ranges decoded between two steps of the timeline's build (a few MB, kept
# decoded until the step has read them: LazyEffects.settle)
BUILD_RUNS = 16
# loom-harness writes log entries at indent 4 inside "log": [...] (ENTRY_SEP between two)
_LOG_START = b'\n  "log": ['


class Cancelled(Exception):
    """The caller stopped caring about this load."""


def _stop_if(cancelled: Callable[[], bool]) -> None:
    if cancelled():
        raise Cancelled()


@dataclass(frozen=True)
class Loaded:
    """A document and its timeline; ``complete`` is False for the head preview."""

    doc: Document
    timeline: Timeline
    complete: bool = True


def _head_effects(data: bytes, path: str) -> list[Any] | None:
    """The first entries of a harness-layout log without scanning the rest, or None."""
    begin = data.find(_LOG_START)
    if begin < 0:
        return None
    pos = begin
    for _ in range(HEAD_ENTRIES):
        pos = data.find(ENTRY_SEP, pos + 1)
        if pos < 0:
            return None
    try:
        raws = _list_decoder.decode(data[begin + len(_LOG_START) - 1 : pos + 6] + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return [e for e in decode_entries(path, raws) if e is not None]


def _preview(opening: Opening, on_head: Callable[[Loaded], None]) -> bytes:
    """Show the first entries from the file's first bytes, before it is read whole.

    Why: reading and splitting a gigabyte takes seconds, the first screen needs a few
    hundred kilobytes. In loom-harness's layout every member the preview needs (version,
    model, system, prompt, episodes) comes before ``log``, so the head of the file is
    those members, then the first entries. The file's head read so far (up to
    HEAD_BYTES), for the whole read to go on from; empty when nothing was shown (another
    layout: the caller shows the head from the whole file instead).
    """
    path, read = opening.path, opening.head
    if len(read) < HEAD_BYTES:  # (a head read on to a long first line may be longer)
        with open(path, "rb") as fh:
            fh.seek(len(read))
            read += fh.read(HEAD_BYTES - len(read))
    data = read[3:] if read[:3] == BOM else read
    begin = data.find(_LOG_START)
    if begin < 0:
        return b""
    try:
        check_utf8(data[:begin], path)  # (the decoders raise their own error on bad bytes)
        with gc_paused():
            _top, header, warnings = parse_top(data[:begin] + b'\n  "log": []\n}', path)
    except LoadError:
        return b""  # the whole file's load names the cause
    head = _head_effects(data, path)
    if not head:
        return b""
    doc = Document(path=path, format="trace", header=header, effects=head, warnings=warnings)
    on_head(Loaded(doc, build_timeline(doc), complete=False))
    return read


def _log_span(data: bytes, cancelled: Callable[[], bool]) -> tuple[int, int] | None:
    """Where ``log``'s ``[`` and the byte after its ``]`` are, found by the layout.

    With ``indent=2`` only a top-level member's closing bracket starts a line with
    exactly two spaces, so the first ``"\n  ]"`` after ``"log": [`` closes the log.
    The search goes a window at a time: one C-level scan of a gigabyte would hold
    the interpreter lock, and the window, for a second.
    """
    begin = data.find(_LOG_START)
    if begin < 0:
        return None
    start = begin + len(_LOG_START) - 1
    if data[start + 1 : start + 2] == b"]":
        return start, start + 2
    pos = start
    while pos < len(data):
        if cancelled():
            raise Cancelled()
        release_pages(data)  # (a mapped file's windows searched so far)
        found = _first_close(data, pos, min(pos + SCAN_WINDOW + 4, len(data)))
        if found >= 0:
            return start, found + 4
        pos += SCAN_WINDOW
    return None


def _first_close(data: bytes, pos: int, stop: int) -> int:
    """Where the first ``"\n  ]"`` in ``data[pos:stop]`` starts, or -1.

    Why numpy and not ``bytes.find``: pretty-printed JSON is full of newlines and spaces,
    the needle's own bytes, so the search advances a few bytes at a time (0.84 s over a
    gigabyte). A ``]`` is rare; the bytes are compared with it in one vectorised pass and
    only its few positions are checked for the newline and two spaces before (0.24 s).
    """
    view = np.frombuffer(data, dtype=np.uint8, count=stop - pos, offset=pos)
    hits = np.flatnonzero(view == 0x5D)  # "]"
    hits = hits[hits >= 3]
    found = hits[(view[hits - 1] == 0x20) & (view[hits - 2] == 0x20) & (view[hits - 3] == 0x0A)]
    del view  # (the buffer must not stay exported: the BOM's removal resizes it)
    return pos + int(found[0]) - 3 if len(found) else -1


def _parse_around_log(
    data: bytes, path: str, cancelled: Callable[[], bool]
) -> tuple[dict[str, msgspec.Raw], TraceHeader, tuple[str, ...], bool]:
    """:func:`parse_top` without scanning the log: the members around it are parsed
    with an empty log in its place, and ``log`` is a raw view of its span. Any
    doubt (another layout, a broken member, a warning: it names a line, counted in
    the bytes without the log) parses the whole document instead, so errors and
    warnings name their true place. The flag: the log's span came from the layout."""
    span = _log_span(data, cancelled)
    if span is not None and len(data) - (span[1] - span[0]) <= max(len(data) // 8, 1 << 20):
        a, b = span  # (the members around the log are copied: only when they are small)
        try:
            with gc_paused():
                top, header, warnings = parse_top(data[:a] + b"[]" + data[b:], path)
        except LoadError:
            pass
        else:
            if not warnings:
                top["log"] = msgspec.Raw(memoryview(data)[a:b])
                return top, header, warnings, True
    with gc_paused():
        return (*parse_top(data, path), False)


def _decode_chunked(
    path: str,
    raws: list[msgspec.Raw],
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
    problems: list[str],
) -> list[Any]:
    effects: list[Any] = []
    for start in range(0, len(raws), CHUNK):
        if cancelled():
            raise Cancelled()
        with gc_paused():
            chunk = decode_entries(path, raws[start : start + CHUNK], start, problems)
        effects.extend(e for e in chunk if e is not None)
        progress(start + len(chunk), len(raws))
    return effects


def _layout_chunks(data: bytes, log: msgspec.Raw) -> list[tuple[int, int]] | None:
    """Byte ranges of whole log entries, ~CHUNK_BYTES each, found by loom-harness's
    indentation.

    With ``indent=2`` every log entry's braces sit at exactly four spaces, and raw
    newlines never occur inside JSON strings, so ``"\n    },\n    {"`` separates two
    entries and nothing else inside ``log``. Only the boundaries where a chunk ends are
    looked for (a jump of CHUNK_BYTES, then the next separator), not every entry's: a
    Python step per entry was 0.8 s at 1,000,000 effects. Decoding each range as one
    list is a C-speed pass per chunk; None (another layout) sends the caller to the
    general path.
    """
    begin = data.find(_LOG_START)
    if begin < 0:
        return None
    start = begin + len(_LOG_START) - 1
    end = start + memoryview(log).nbytes
    if data[start : start + 1] != b"[" or data[end - 1 : end] != b"]":
        return None
    first = data.find(b"\n    {", start, end)
    if first < 0:
        return [] if not data[start + 1 : end - 1].strip() else None
    cuts = [first + 5]
    pos = first
    while True:  # jump a chunk's bytes ahead, then to the next boundary between entries
        pos = data.find(ENTRY_SEP, pos + CHUNK_BYTES, end)
        if pos < 0:
            break
        cuts += [pos + 6, pos + 8]  # end of one chunk, start of the next
    closing = data.rfind(b"\n    }", start, end)
    if closing < 0 or data[start + 1 : first].strip() or data[closing + 6 : end - 1].strip():
        return None  # something outside the indented entries (hand-edited): not this layout
    cuts.append(closing + 6)
    return list(zip(cuts[::2], cuts[1::2], strict=True))


def _decode_ranges(
    data: bytearray | MappedFile,
    ranges: list[tuple[int, int]],
    document: Callable[[LazyEffects], Document],
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
) -> Loaded:
    """Decode each range of entries as a list, in place, and build the timeline from a
    few ranges at a time; the document keeps its effects as :class:`LazyEffects`.

    Why in place: the effects' raw payloads are views into the buffer they were
    decoded from, so decoding a copy of each chunk would keep a second copy of the
    whole log alive. Instead the separator bytes just outside a chunk (indentation
    before, a comma or newline after) are swapped for ``[`` and ``]`` while that
    chunk is decoded from a view of the file's own buffer, then put back.

    Why the timeline as the ranges come: once the walk and the columns have read a
    range's structs nothing keeps them (the document decodes an effect again when a
    view asks), so the run's structs, 0.39× the file, are never all alive at once.
    """
    view = memoryview(data)
    effects = LazyEffects(cast(bytes, data))
    doc = replace(document(effects), entry_index=effects.at)
    builder = TimelineBuilder(doc)
    # the collector stays paused throughout: the walk's context items are tracked objects,
    # and collections between the runs would scan every one made so far, again and again
    with gc_paused():
        for n, (a, b) in enumerate(ranges):
            _stop_if(cancelled)
            with writing(data):
                before, after = data[a - 1], data[b]
                data[a - 1], data[b] = 0x5B, 0x5D  # "[" and "]"
                try:
                    chunk = log_decoder.decode(view[a - 1 : b + 1])
                finally:
                    data[a - 1], data[b] = before, after
            effects.add_run((a, b), chunk)
            del chunk
            if (n + 1) % BUILD_RUNS == 0:
                builder.extend()
                effects.settle()
                release_pages(data)
            progress(n + 1, len(ranges))
        _stop_if(cancelled)
        loaded = Loaded(doc, builder.finish())
    effects.settle()
    return loaded


def _general_log(
    path: str,
    data: bytes,
    log: msgspec.Raw,
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
    problems: list[str],
) -> list[Any]:
    """The log entry by entry, for any layout: odd entries read field by field or named."""
    try:
        raws = _list_decoder.decode(log)
    except msgspec.ValidationError as err:
        raise LoadError(path, "not a loom trace ('log' is not a list)") from err
    except RecursionError:
        raise LoadError(path, nesting_cause(data)) from None
    return _decode_chunked(path, raws, progress, cancelled, problems)


def _general_load(
    data: bytes,
    path: str,
    parsed: tuple[dict[str, msgspec.Raw], TraceHeader, tuple[str, ...]],
    around: bool,
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
) -> Loaded:
    """Any layout: the log entry by entry (``around``: only the members around the log
    were parsed, so the whole document is parsed first, as a plain load reads it)."""
    top, header, warnings = parsed
    if around:
        with gc_paused():  # the whole document, as a plain load reads it (lenient, its errors)
            top, header, warnings = parse_top(data, path)
    problems: list[str] = []
    effects = _general_log(path, data, top["log"], progress, cancelled, problems)
    doc = assemble(data, path, top, header, effects, with_problems(warnings, problems))
    _stop_if(cancelled)
    with gc_paused():
        return Loaded(doc, build_timeline(doc))


def load_progressive(
    path: str | Opening,
    on_head: Callable[[Loaded], None] | None = None,
    progress: Callable[[int, int], None] = lambda _d, _t: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> Loaded:
    """Load a file fully, calling ``on_head`` first with a preview when the file is big.

    ``path`` may be an :class:`Opening` (the format already decided, as the window does
    before it starts this in a worker); else it is decided here, once. A big trace is read
    on from the bytes its decision and preview read; any other file is its reader's load.
    """
    opening = path if isinstance(path, Opening) else opened(path)
    big = opening.reader is TRACE and opening.stat.st_size >= SMALL_BYTES
    mapped = map_file(opening.path) if big and opening.head[:3] != BOM else None
    per_byte = _peak_per_byte(opening)
    if mapped is not None and per_byte == LAYOUT_PEAK_PER_BYTE:
        per_byte = MAPPED_PEAK_PER_BYTE
    check_room(opening.path, opening.stat.st_size, opening.head, per_byte, mapped is not None)
    return out_of_memory(
        opening.path,
        opening.stat.st_size,
        lambda: _load(opening, mapped, on_head, progress, cancelled),
    )


def _peak_per_byte(opening: Opening) -> float | None:
    """This load's own peak per byte for a big trace whose first bytes show loom-harness's
    layout (``log`` begins in them): the path of :func:`_decode_ranges`, far below a
    whole document's decode. None for anything else (the format's figure): a layout that
    turns out odd further on is decoded whole, and a load that then runs out of memory
    says so (:func:`~loom_core.formats.memory_room.out_of_memory`)."""
    big = opening.reader is TRACE and opening.stat.st_size >= SMALL_BYTES
    return LAYOUT_PEAK_PER_BYTE if big and _LOG_START in opening.head else None


def _load(
    opening: Opening,
    mapped: MappedFile | None,
    on_head: Callable[[Loaded], None] | None,
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
) -> Loaded:
    path = opening.path
    if opening.reader is not TRACE or opening.stat.st_size < SMALL_BYTES:
        data = opening.head if opening.whole else read_bytes(path)
        doc = opening.reader.load(data, path)
        return Loaded(doc, build_timeline(doc))
    shown = b""
    if on_head is not None:
        shown = _preview(opening, on_head)
    if mapped is not None:
        try:
            return _load_bytes(mapped, path, on_head, shown, progress, cancelled)
        except (AttributeError, TypeError):
            # a net: a path whose words still want a bytes method a mapping lacks (the
            # known ones take the mapping: test_mapped_file) reads the file and says it
            pass
    buf = read_bytes(path, mutable=True, head=shown or opening.head, since=opening.stat)
    if buf[:3] == BOM:
        del buf[:3]  # in place: the buffer stays the one the effects are views into
    return _load_bytes(buf, path, on_head, shown, progress, cancelled)


def _load_bytes(
    buf: bytearray | MappedFile,
    path: str,
    on_head: Callable[[Loaded], None] | None,
    shown: bytes,
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
) -> Loaded:
    """A big trace's whole load from its bytes, read or mapped (``buf``, written only by
    :func:`_decode_ranges`); a mapping's pages are let go after each pass over them."""
    # The readers below only read; they get this same buffer (typed as bytes, which a
    # bytearray is not to mypy) so the effects stay views into it. Only _decode_ranges writes.
    data = cast(bytes, buf)

    def between_slices() -> None:
        _stop_if(cancelled)
        release_pages(data)  # (a mapped file's slices checked so far)

    check_utf8(data, path, between_slices)
    release_pages(data)
    try:
        top, header, warnings, around = _parse_around_log(data, path, cancelled)
    except LoadError as err:  # several JSON records: say what they are (unknown_json)
        raise LoadError(path, describe(data, err.cause)) from err
    if on_head is not None and not shown:
        head = _head_effects(data, path)
        if head:
            head_doc = Document(
                path=path, format="trace", header=header, effects=head, warnings=warnings
            )
            on_head(Loaded(head_doc, build_timeline(head_doc), complete=False))
    ranges = _layout_chunks(data, top["log"])
    loaded = None
    if ranges is not None:
        whole = with_problems(warnings, [])
        try:
            loaded = _decode_ranges(
                buf,
                ranges,
                lambda effects: assemble(data, path, top, header, effects, whole),
                progress,
                cancelled,
            )
        except (msgspec.DecodeError, RecursionError):
            loaded = None  # an odd entry: the general path reads it field by field or names it
    if loaded is None:
        loaded = _general_load(data, path, (top, header, warnings), around, progress, cancelled)
    release_pages(data)
    with gc_paused():
        # The run's millions of objects (context items, pairs) were made while the
        # collector was paused: once it runs again its first young collection would scan
        # every one of them, a stall of a second or more in whichever thread allocates
        # next (the window's, often). They live as long as the run is open, so they go
        # straight to the permanent generation; the window thaws it when a tab closes
        # (loom_desktop.infra.gc_policy), and refcounting frees them as usual.
        gc.freeze()
    return loaded
