"""The one reader interface every format is read through, and the byte rules they share.

Why one interface: opening a file asked the foreign readers four times and checked its
UTF-8 three times (the window's sniff, the head preview, the progressive loader and the
plain loader each decided again), and the answers could differ: a journal with a UTF-8
byte-order mark loaded on the command line and was refused in the window. Now the format
is decided once, from the file's first bytes (:func:`loom_core.formats.loader.open_run`),
into a :class:`Reader`; whoever loads the file asks that reader, never the bytes again.
Loom's own formats (trace, journal, wirelog, exchange sidecar) are readers like the
foreign ones (:mod:`loom_core.formats.foreign`).

The byte rules here are decided once for every reader: a leading UTF-8 byte-order mark
is skipped (editors on Windows add one; no producer we read writes one), UTF-16 and
UTF-32 text is refused in words, and a file that starts with binary data (a NUL or
another control byte where text must start) is refused from its first bytes, before
anything reads the rest of it.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from loom_core.errors import LoadError

if TYPE_CHECKING:
    from loom_core.formats.document import Document

UTF8_SLICE = 8 << 20  # bytes checked per C call (see check_utf8)
SNIFF_BYTES = 1 << 16  # what a reader's sniff sees of a file: its first 64 KiB
BOM = b"\xef\xbb\xbf"  # some editors start UTF-8 text with it; loom never does
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_BLANK = b" \t\r\n\f\v"


class LineParser(Protocol):
    """A line-based format read a block of lines at a time (a live tab follows the file by
    offset instead of re-reading it whole, :mod:`loom_core.live.appended`). Fed a file's
    complete lines in order, then asked for the run, it must give exactly what the
    reader's ``load`` gives for those bytes followed by ``tail``: each format keeps its
    one parsing logic, split at the line."""

    def add(self, block: bytes) -> None:
        """Take complete lines (``block`` ends in a newline, or is empty)."""

    def document(self, path: str, tail: bytes) -> Document:
        """The run from every line taken, with ``tail`` (a last line not yet complete)
        after them; ``LoadError`` where ``load`` would raise one."""


@dataclass(frozen=True)
class Reader:
    """A format: how to recognise it and read it (loom's own formats and other tools')."""

    name: str  # Document.format, e.g. "otlp"
    label: str  # what dialogs and the README call it, e.g. "OpenTelemetry (OTLP) trace"
    patterns: tuple[str, ...]  # file-dialog patterns, e.g. ("*.eval",); never bare "*.json"
    sniff: Callable[[bytes, str], bool]  # (first SNIFF_BYTES bytes, path) -> is it mine?
    load: Callable[[bytes, str], Document]  # (whole file, path) -> Document; LoadError if not
    # a file being written is followed live (re-read whole as it grows); False where a run,
    # once in the file, is final and the file holds several to choose from (Inspect logs)
    follow: bool = True
    # other files the run is also read from (path -> their paths), e.g. a Claude Code
    # session's sub-agent files: a live tab re-reads when one of them changes too
    companions: Callable[[str], list[str]] | None = None
    # the other way round: the run a file is a part of, from where the file is (path ->
    # the run's path, else None), e.g. a sub-agent's file -> its session's transcript
    part_of: Callable[[str], str | None] | None = None
    # always opened live and followed by byte offset as it grows (a loom journal), rather
    # than loaded, or re-read whole while a writer still has it
    tail: bool = False
    # a line-based format (Claude Code, OTLP JSON lines): a new parser of appended lines,
    # so a live tab parses only what was appended; None: a live tab re-reads it whole
    lines: Callable[[], LineParser] | None = None


@dataclass(frozen=True)
class Opening:
    """A file whose format is decided: the reader that reads it and the bytes it was decided
    from. Whoever loads the file goes on from ``head`` (:func:`read_rest`), so the first
    bytes are read once and no one decides again."""

    path: str
    reader: Reader
    head: bytes  # the file's first bytes, as read when deciding (up to the whole file)
    stat: os.stat_result  # the file when it was decided: a rewrite since is read afresh

    @property
    def whole(self) -> bool:
        """Whether ``head`` is the whole file."""
        return len(self.head) >= self.stat.st_size


def without_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte-order mark (copied only when there is one)."""
    return data[3:] if data[:3] == BOM else data


def bom_length(head: bytes) -> int:
    """How many bytes of a UTF-8 byte-order mark the file starts with (0 or 3)."""
    return len(BOM) if head[:3] == BOM else 0


def refuse_at_head(head: bytes, path: str) -> None:
    """Refuse a file from its first bytes when no text format can start like that: UTF-16
    or UTF-32 text (their byte-order marks), or binary data (a control byte where the first
    character must be). Why from the head: a 2 GB file of NUL bytes was read whole, copied
    and decoded before its JSON error, growing the window by 8 GB."""
    wide = next((name for bom, name in _WIDE_BOMS if head.startswith(bom)), None)
    if wide is not None:
        raise LoadError(path, f"{wide} text, not UTF-8 (save it as UTF-8 to open it)")
    first = len(head) - len(head.lstrip(_BLANK))
    if first < len(head) and head[first] < 0x20:
        raise LoadError(
            path, f"binary data, not a text file (byte 0x{head[first]:02x} at offset {first})"
        )


def check_utf8(data: bytes, path: str, between: Callable[[], None] = lambda: None) -> None:
    """Refuse bytes that are not UTF-8 (the decoders would raise mid-way, not a LoadError).

    Loom writes ASCII; anything else must at least be UTF-8. A file longer than
    UTF8_SLICE is checked a slice at a time (:func:`_check_slices`), ``between`` called
    before each slice (it may raise to stop the check: the loader's cancel).
    """
    if len(data) > UTF8_SLICE or not isinstance(data, bytes | bytearray):  # (or mapped)
        _check_slices(data, path, between)
    elif not data.isascii():
        refuse_at_head(data[:4], path)
        _decoded(data, 0, True, path, data)


def _check_slices(data: bytes, path: str, between: Callable[[], None]) -> None:
    """:func:`check_utf8` of a big file, a slice at a time. Why: one ``isascii`` or
    ``decode`` of a gigabyte is a single C call that holds the interpreter lock for its
    whole length (40-120 ms for the 1 GB run), and the window's thread, which needs the
    lock for every Python call, cannot answer meanwhile. Each slice is tested for ASCII
    in place (numpy's maximum: no copy; the window has numpy loaded already, a command's
    load of a file this big pays its import, about 0.1 s of CPU);
    one that is not is decoded, and a character cut by its end is decoded with the next
    slice, so the verdict and the bad byte's offset are those of one decode of the whole.
    """
    import numpy as np

    pos, refused = 0, False
    while pos < len(data):
        between()
        n = min(UTF8_SLICE, len(data) - pos)
        if int(np.frombuffer(data, np.uint8, n, pos).max()) < 0x80:
            pos += n  # (the array is gone at once: the buffer must not stay exported)
            continue
        if not refused:
            refuse_at_head(data[:4], path)
            refused = True
        with memoryview(data) as whole, whole[pos : pos + n] as piece:
            pos += _decoded(piece, pos, pos + n >= len(data), path, data)


def _decoded(piece: bytes | memoryview, pos: int, final: bool, path: str, data: bytes) -> int:
    """How many bytes of ``piece`` (at ``pos`` in ``data``) are whole UTF-8 characters
    (all of them when ``final``); a bad byte is refused naming its line and offset."""
    try:
        return codecs.utf_8_decode(piece, "strict", final)[1]
    except UnicodeDecodeError as err:
        from loom_core.formats.tolerant import line_of  # (not at the top: the loader's start)

        bad = pos + err.start
        line = line_of(data, bad)
        raise LoadError(path, f"not UTF-8 text (bad byte at line {line}, offset {bad})") from err
