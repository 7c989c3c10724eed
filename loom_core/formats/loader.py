"""Open any run file: its format decided once, from its first bytes, into one reader.

:func:`open_run` reads a file's head and decides which :class:`~.reader.Reader` reads it:
a foreign reader that claims it (:mod:`.foreign`), else a file no text format can start
like is refused (:func:`~.reader.refuse_at_head`), else one of loom's own, by content not
name. A trace is one JSON object (usually pretty-printed, so its first line is ``{``);
a journal's first complete line is an object with ``type`` header/intent/effect;
a wirelog's first line is an object with ``request`` and ``response``; a proxy's
exchange sidecar's first line is its ``session`` line (format ``loom-exchanges``).
The command line (:func:`load`) and the window (``load_progressive``, the journal tail)
take that one decision, so they cannot disagree on a file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import msgspec

from loom_core.errors import LoadError
from loom_core.formats import foreign
from loom_core.formats.document import Document
from loom_core.formats.exchanges import load_exchanges_bytes
from loom_core.formats.journal import load_journal_bytes
from loom_core.formats.memory_room import check_room, out_of_memory
from loom_core.formats.read_file import read_bytes as read_bytes  # re-exported
from loom_core.formats.reader import BOM as BOM  # re-exported
from loom_core.formats.reader import (
    SNIFF_BYTES,
    Opening,
    Reader,
    check_utf8,
    refuse_at_head,
    without_bom,
)
from loom_core.formats.trace import load_trace_bytes
from loom_core.formats.unknown_json import describe
from loom_core.formats.wirelog import load_wirelog_bytes

_probe = msgspec.json.Decoder(dict[str, msgspec.Raw])
_JOURNAL_TYPES = (b'"header"', b'"intent"', b'"effect"')
_SIDECAR_TYPES = (b'"session"', b'"exchange"', b'"end"')
_NONBLANK = re.compile(rb"\S")
DECIDE_BYTES = 1 << 20  # the head a format is decided from: a journal's first lines
LINE_LIMIT = 16 << 20  # the head is read on to a whole first line, up to this size


def _first_line(data: bytes) -> tuple[bytes, bool]:
    """The first non-blank line and whether anything non-blank follows (without copying)."""
    match = _NONBLANK.search(data)
    start = match.start() if match else len(data)
    end = data.find(b"\n", start)
    if end < 0:
        return data[start:], False
    return data[start:end], _NONBLANK.search(data, end) is not None


def detect_format(data: bytes) -> str:
    """``trace``, ``journal``, ``wirelog`` or ``exchanges`` (``trace`` when in doubt, for
    its error).

    A few lines are looked at, not just the first: a journal whose header line is
    torn or hand-broken is still a journal, and its reader names the bad line.
    """
    first, more = _first_line(data)
    if not more:
        return _single_line_format(first.strip())
    pos = 0
    for _ in range(3):
        match = _NONBLANK.search(data, pos)
        if match is None:
            break
        pos = data.find(b"\n", match.start())
        pos = len(data) if pos < 0 else pos
        fmt = _line_format(data[match.start() : pos])
        if fmt is not None:
            return fmt
    return "trace"


def _line_format(line: bytes) -> str | None:
    """``journal`` / ``exchanges`` / ``wirelog`` when ``line`` is one of their lines, else None."""
    try:
        head = _probe.decode(line)
    except (msgspec.DecodeError, RecursionError):  # the reader names the cause
        return None
    if "type" in head and bytes(head["type"]) in _JOURNAL_TYPES:
        return "journal"
    if "type" in head and bytes(head["type"]) in _SIDECAR_TYPES:
        return "exchanges"
    if "request" in head and "response" in head:
        return "wirelog"
    return None


_TRACE_OPENING = re.compile(rb'\A\s*\{\s*"version"\s*:')


def loom_claim(head: bytes) -> str | None:
    """The loom format that claims a file from its first bytes, or None: a journal's,
    wirelog's or exchange sidecar's first line, or a trace's opening (an object whose
    first member is ``version`` and that names ``log``). Unlike :func:`detect_format`
    there is no default: a folder's other ``.json`` files are no one's."""
    head = without_bom(head)
    match = _NONBLANK.search(head)
    if match is None:
        return None
    end = head.find(b"\n", match.start())
    fmt = _line_format(head[match.start() : end if end >= 0 else len(head)])
    if fmt is not None:
        return fmt
    return "trace" if _TRACE_OPENING.match(head) and b'"log"' in head else None


def _single_line_format(data: bytes) -> str:
    try:
        head = _probe.decode(data)
    except (msgspec.DecodeError, RecursionError):  # the trace reader names the cause
        return "trace"
    if "type" in head and "log" not in head and bytes(head["type"]) in _SIDECAR_TYPES:
        return "exchanges"
    if "type" in head and "log" not in head:
        return "journal"
    if "request" in head and "response" in head and "log" not in head:
        return "wirelog"
    return "trace"


def _loom_load(
    load_fmt: Callable[[bytes, str], Document], utf8: bool = True
) -> Callable[[bytes, str], Document]:
    """A loom format's whole load: the byte rules every loom format shares, then its reader.
    ``utf8=False``: the reader checks each line itself (a journal stops at a bad one, as at
    any other unreadable line, instead of refusing the lines before it)."""

    def load_loom(data: bytes, path: str) -> Document:
        data = without_bom(data)
        if _NONBLANK.search(data) is None:  # search, not strip(): no copy of a big file
            raise LoadError(path, "the file is empty")
        if utf8:
            check_utf8(data, path)
        return load_fmt(data, path)

    return load_loom


def _load_trace(data: bytes, path: str) -> Document:
    try:
        return load_trace_bytes(data, path)
    except LoadError as err:  # several JSON records: say what they are (unknown_json)
        raise LoadError(path, describe(data, err.cause)) from err


def _claims(fmt: str) -> Callable[[bytes, str], bool]:
    return lambda head, _path: loom_claim(head) == fmt


# loom's own: a trace is written whole (never followed), a journal is tailed by offset
TRACE = Reader(
    "trace", "loom trace", ("*.loom.json",), _claims("trace"), _loom_load(_load_trace), follow=False
)
JOURNAL = Reader(
    "journal",
    "loom journal",
    ("*.journal.jsonl", "*.jsonl"),
    _claims("journal"),
    _loom_load(load_journal_bytes, utf8=False),
    tail=True,
)
WIRELOG = Reader(
    "wirelog",
    "loom wirelog",
    ("*.wirelog", "*.wirelog.jsonl"),
    _claims("wirelog"),
    _loom_load(load_wirelog_bytes),
    follow=False,
)
EXCHANGES = Reader(
    "exchanges",
    "loom exchange sidecar",
    ("*.exchanges.jsonl",),
    _claims("exchanges"),
    _loom_load(load_exchanges_bytes),
    follow=False,
)
LOOM_READERS = {r.name: r for r in (TRACE, JOURNAL, WIRELOG, EXCHANGES)}


def decide(head: bytes, path: str) -> Reader:
    """The reader of a file that starts with ``head`` (or is ``head``, whole).

    A foreign reader that claims it first (a protobuf or zip file starts with bytes no
    text does), then the byte rules (UTF-16, binary data: refused here, from the head),
    then loom's own formats by content; an empty file is a journal not yet written."""
    return _foreign_or_refused(head, path) or _loom_reader(head)


def _foreign_or_refused(head: bytes, path: str) -> Reader | None:
    claimant = foreign.reader_for(head, path)
    if claimant is None:
        refuse_at_head(head[:SNIFF_BYTES], path)
    return claimant


def _loom_reader(head: bytes) -> Reader:
    head = without_bom(head)
    return LOOM_READERS[detect_format(head)] if _NONBLANK.search(head) else JOURNAL


def _with_first_line(fh: BinaryIO, head: bytes) -> bytes:
    """``head`` read on until its first line is whole (or the file ends): a loom format is
    told by its first lines, and a journal's header or a wirelog's first exchange can be
    longer than a head. Not for a trace's opening (a compact trace is one long line) and
    bounded: past :data:`LINE_LIMIT` the reader names the cause."""
    if _TRACE_OPENING.match(without_bom(head)):
        return head
    while len(head) < LINE_LIMIT:
        match = _NONBLANK.search(head)
        if match is not None and head.find(b"\n", match.start()) >= 0:
            break
        more = fh.read(len(head) or DECIDE_BYTES)
        if not more:
            break
        head += more
    return head


def open_run(path: str | Path, head_bytes: int = DECIDE_BYTES) -> Opening | None:
    """Decide the format of the file at ``path`` from its first ``head_bytes``; None when
    it does not exist (yet). A :class:`LoadError` when it cannot be read or no reader can
    read it from how it starts."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            head = fh.read(head_bytes)
            reader = _foreign_or_refused(head, str(path))
            if reader is None:
                head = _with_first_line(fh, head)
                reader = _loom_reader(head)
    except FileNotFoundError:
        return None
    except IsADirectoryError as err:
        raise LoadError(path, "is a directory, not a file") from err
    except OSError as err:
        raise LoadError(path, os.strerror(err.errno or 0) or str(err)) from err
    return Opening(str(path), reader, head, st)


def opened(path: str | Path, head_bytes: int = DECIDE_BYTES) -> Opening:
    """:func:`open_run` for a file that must exist."""
    opening = open_run(path, head_bytes)
    if opening is None:
        raise LoadError(path, "no such file")
    return opening


def sniff_format(path: str | Path) -> str | None:
    """The format name of a file from its first bytes, or None when it does not exist (yet)."""
    opening = open_run(path)
    return None if opening is None else opening.reader.name


def load_bytes(data: bytes, path: str) -> Document:
    """Parse ``data`` (a whole file) by the reader its first bytes name."""
    return decide(data, path).load(data, path)


def load_opened(opening: Opening) -> Document:
    """The whole load of a decided file, by its reader: the head when it is the whole file,
    else the file read whole (its first MiB again, from the page cache: an immutable copy
    of head + rest would hold the file twice; the window's big traces read on from the
    head instead, see :mod:`.progressive`)."""
    check_room(opening.path, opening.stat.st_size, opening.head)

    def whole() -> Document:
        data = opening.head if opening.whole else read_bytes(opening.path)
        return opening.reader.load(data, opening.path)

    return out_of_memory(opening.path, opening.stat.st_size, whole)


def load(path: str | Path) -> Document:
    """Open a trace, journal, wirelog or foreign run from disk."""
    return load_opened(opened(path))
