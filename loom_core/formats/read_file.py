"""Read a whole input file, OS errors turned into a :class:`LoadError` naming the cause.

A leaf apart from :mod:`.loader` (which brings the schema, pydantic and every reader)
so that ``summary --json`` can read a big trace and fork its checksum child before
paying for those imports.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, overload

from loom_core.errors import LoadError

READ_CHUNK = 16 << 20  # bytes appended per step while the whole file is read


def _read_buffer(path: str | Path) -> bytearray:
    """The whole file in a bytearray, read a chunk at a time.

    Why not ``bytearray(size)`` and one ``readinto``: that constructor zero-fills the
    buffer while holding the interpreter lock, 0.7 s for a gigabyte, during which the
    window (whose thread needs the lock for every Python call) cannot paint its first
    rows. A chunk's read runs without the lock, and appending it holds the lock for
    about 10 ms (on Linux a large block usually grows in place). The chunks go up to the
    size the file had when opened; what a writer added meanwhile is read once at the end,
    so a file that keeps growing cannot keep this loop going.
    """
    buf = bytearray()
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        while len(buf) < size and (chunk := fh.read(min(READ_CHUNK, size - len(buf)))):
            buf += chunk  # (a file that shrank meanwhile ends the loop early)
        buf += fh.read()
    return buf


@overload
def read_bytes(path: str | Path, mutable: Literal[False] = False) -> bytes: ...
@overload
def read_bytes(path: str | Path, mutable: Literal[True]) -> bytearray: ...


def read_bytes(path: str | Path, mutable: bool = False) -> bytes | bytearray:
    """Read a file, turning OS errors into a :class:`LoadError` with the cause.

    ``mutable`` returns a bytearray (see :mod:`loom_core.formats.progressive` for why).
    """
    try:
        return _read_buffer(path) if mutable else Path(path).read_bytes()
    except FileNotFoundError as err:
        raise LoadError(path, "no such file") from err
    except IsADirectoryError as err:
        raise LoadError(path, "is a directory, not a file") from err
    except PermissionError as err:
        raise LoadError(path, "permission denied") from err
    except OSError as err:
        raise LoadError(path, os.strerror(err.errno or 0) or str(err)) from err
