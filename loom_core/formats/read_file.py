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


def _read_buffer(
    path: str | Path, head: bytes = b"", since: os.stat_result | None = None
) -> bytearray:
    """The whole file in a bytearray, read a chunk at a time.

    Why not ``bytearray(size)`` and one ``readinto``: that constructor zero-fills the
    buffer while holding the interpreter lock, 0.7 s for a gigabyte, during which the
    window (whose thread needs the lock for every Python call) cannot paint its first
    rows. A chunk's read runs without the lock, and appending it holds the lock for
    about 10 ms (on Linux a large block usually grows in place). The chunks go up to the
    size the file had when opened; what a writer added meanwhile is read once at the end,
    so a file that keeps growing cannot keep this loop going.

    ``head``: the file's first bytes, already read when its format was decided (at
    ``since``): the read goes on after them, unless the file was replaced or rewritten
    since (another inode, time or a smaller size), when it starts again from the start.

    Each chunk is read into the same small buffer (``readinto``), not a new ``bytes``:
    a fresh 16 MB object per chunk is fresh memory, its pages faulted in and zeroed by
    the kernel before the copy, for every chunk of the file.
    """
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        size = st.st_size
        buf = bytearray(head if since is not None and _same_file(st, since, len(head)) else b"")
        fh.seek(len(buf))
        chunk = memoryview(bytearray(min(READ_CHUNK, max(size - len(buf), 0))))
        while len(buf) < size and (got := fh.readinto(chunk[: size - len(buf)])):
            buf += chunk[:got]  # (a file that shrank meanwhile ends the loop early)
        chunk.release()
        buf += fh.read()
    return buf


def _same_file(st: os.stat_result, since: os.stat_result, read: int) -> bool:
    """Whether the file is still the one ``since`` described, grown at most (the head read
    from it is still its head); a rewrite in place changes its modification time."""
    same = (st.st_dev, st.st_ino, st.st_mtime_ns) == (since.st_dev, since.st_ino, since.st_mtime_ns)
    return same and st.st_size >= read


@overload
def read_bytes(
    path: str | Path,
    mutable: Literal[False] = False,
    head: bytes = b"",
    since: os.stat_result | None = None,
) -> bytes: ...
@overload
def read_bytes(
    path: str | Path, mutable: Literal[True], head: bytes = b"", since: os.stat_result | None = None
) -> bytearray: ...


def read_bytes(
    path: str | Path, mutable: bool = False, head: bytes = b"", since: os.stat_result | None = None
) -> bytes | bytearray:
    """Read a file, turning OS errors into a :class:`LoadError` with the cause.

    ``mutable`` returns a bytearray (see :mod:`loom_core.formats.progressive` for why),
    read on from ``head`` when the file is the one ``since`` describes. Not mutable, the
    bytes are read whole (an immutable copy of head + rest would hold the file twice).
    """
    try:
        return _read_buffer(path, head, since) if mutable else Path(path).read_bytes()
    except FileNotFoundError as err:
        raise LoadError(path, "no such file") from err
    except IsADirectoryError as err:
        raise LoadError(path, "is a directory, not a file") from err
    except PermissionError as err:
        raise LoadError(path, "permission denied") from err
    except OSError as err:
        raise LoadError(path, os.strerror(err.errno or 0) or str(err)) from err
