"""Open any loom document, deciding its format from the content, not the name.

A trace is one JSON object (usually pretty-printed, so its first line is ``{``);
a journal's first complete line is an object with ``type`` header/intent/effect;
a wirelog's first line is an object with ``request`` and ``response``.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from .document import Document
from .errors import LoadError
from .journal import load_journal_bytes
from .trace import load_trace_bytes
from .wirelog import load_wirelog_bytes

_probe = msgspec.json.Decoder(dict[str, msgspec.Raw])
_JOURNAL_TYPES = (b'"header"', b'"intent"', b'"effect"')


def detect_format(data: bytes) -> str:
    """``trace``, ``journal`` or ``wirelog`` (``trace`` when in doubt, for its error)."""
    first, _, rest = data.lstrip().partition(b"\n")
    if not rest.strip():
        return "trace"  # a single line: a compact trace (or a one-line journal, below)
    try:
        head = _probe.decode(first)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return "trace"
    if "type" in head and bytes(head["type"]) in _JOURNAL_TYPES:
        return "journal"
    if "request" in head and "response" in head:
        return "wirelog"
    return "trace"


def _single_line_format(data: bytes) -> str:
    try:
        head = _probe.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return "trace"
    if "type" in head and "log" not in head:
        return "journal"
    if "request" in head and "response" in head and "log" not in head:
        return "wirelog"
    return "trace"


def read_bytes(path: str | Path) -> bytes:
    """Read a file, turning OS errors into a :class:`LoadError` with the cause."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError as err:
        raise LoadError(path, "no such file") from err
    except IsADirectoryError as err:
        raise LoadError(path, "is a directory, not a file") from err
    except PermissionError as err:
        raise LoadError(path, "permission denied") from err
    except OSError as err:
        raise LoadError(path, os.strerror(err.errno or 0) or str(err)) from err


def load_bytes(data: bytes, path: str) -> Document:
    """Parse ``data`` as whichever loom format it holds."""
    if not data.strip():
        raise LoadError(path, "the file is empty")
    fmt = detect_format(data)
    if fmt == "trace" and b"\n" not in data.strip():
        fmt = _single_line_format(data.strip())
    if fmt == "journal":
        return load_journal_bytes(data, path)
    if fmt == "wirelog":
        return load_wirelog_bytes(data, path)
    return load_trace_bytes(data, path)


def load(path: str | Path) -> Document:
    """Open a trace, journal or wirelog from disk."""
    return load_bytes(read_bytes(path), str(path))
