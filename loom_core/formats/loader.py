"""Open any loom document, deciding its format from the content, not the name.

A trace is one JSON object (usually pretty-printed, so its first line is ``{``);
a journal's first complete line is an object with ``type`` header/intent/effect;
a wirelog's first line is an object with ``request`` and ``response``; a proxy's
exchange sidecar's first line is its ``session`` line (format ``loom-exchanges``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.exchanges import load_exchanges_bytes
from loom_core.formats.foreign import reader_for
from loom_core.formats.journal import load_journal_bytes
from loom_core.formats.read_file import read_bytes as read_bytes  # re-exported
from loom_core.formats.trace import load_trace_bytes
from loom_core.formats.unknown_json import describe
from loom_core.formats.wirelog import load_wirelog_bytes

_probe = msgspec.json.Decoder(dict[str, msgspec.Raw])
_JOURNAL_TYPES = (b'"header"', b'"intent"', b'"effect"')
_SIDECAR_TYPES = (b'"session"', b'"exchange"', b'"end"')
_NONBLANK = re.compile(rb"\S")


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


def sniff_format(path: str | Path, limit: int = 1 << 20) -> str | None:
    """The format of a file from its first bytes, or None when it does not exist (yet)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(limit)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise LoadError(path, os.strerror(err.errno or 0) or str(err)) from err
    foreign = reader_for(head, str(path))
    if foreign is not None:
        return foreign.name
    head = without_bom(head)
    return detect_format(head) if _NONBLANK.search(head) else "journal"


BOM = b"\xef\xbb\xbf"  # some editors start UTF-8 text with it; loom never does
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def without_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte-order mark (copied only when there is one)."""
    return data[3:] if data[:3] == BOM else data


def check_utf8(data: bytes, path: str) -> None:
    """Refuse bytes that are not UTF-8 (the decoders would raise mid-way, not a LoadError)."""
    if not data.isascii():  # loom writes ASCII; anything else must at least be UTF-8
        wide = next((name for bom, name in _WIDE_BOMS if data.startswith(bom)), None)
        if wide is not None:
            raise LoadError(path, f"{wide} text, not UTF-8 (save it as UTF-8 to open it)")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as err:
            line = data.count(b"\n", 0, err.start) + 1
            raise LoadError(
                path, f"not UTF-8 text (bad byte at line {line}, offset {err.start})"
            ) from err


def load_bytes(data: bytes, path: str) -> Document:
    """Parse ``data`` as whichever format it holds: a foreign one (:mod:`.foreign`) whose
    reader claims it, else a loom format."""
    foreign = reader_for(data, path)
    if foreign is not None:
        return foreign.load(data, path)
    data = without_bom(data)
    if _NONBLANK.search(data) is None:  # search, not strip(): no copy of a big file
        raise LoadError(path, "the file is empty")
    check_utf8(data, path)
    fmt = detect_format(data)
    if fmt == "journal":
        return load_journal_bytes(data, path)
    if fmt == "wirelog":
        return load_wirelog_bytes(data, path)
    if fmt == "exchanges":
        return load_exchanges_bytes(data, path)
    try:
        return load_trace_bytes(data, path)
    except LoadError as err:  # several JSON records: say what they are (unknown_json)
        raise LoadError(path, describe(data, err.cause)) from err


def load(path: str | Path) -> Document:
    """Open a trace, journal, wirelog or foreign run from disk."""
    return load_bytes(read_bytes(path), str(path))
