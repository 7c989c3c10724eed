"""Read a whole input file, OS errors turned into a :class:`LoadError` naming the cause.

A leaf apart from :mod:`.loader` (which brings the schema, pydantic and every reader)
so that ``summary --json`` can read a big trace and fork its checksum child before
paying for those imports.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal, overload

from loom_core.errors import LoadError

READ_CHUNK = 16 << 20  # bytes appended per step while the whole file is read
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)


def _read_buffer(
    path: str | Path, head: bytes = b"", since: os.stat_result | None = None
) -> bytearray:
    """The whole file in a bytearray, read a chunk at a time straight into it.

    Why not ``bytearray(size)`` and one ``readinto``: that constructor zero-fills the
    buffer while holding the interpreter lock, 0.7 s for a gigabyte, during which the
    window (whose thread needs the lock for every Python call) cannot paint its first
    rows. Instead the buffer is grown to the file's size without writing it
    (:func:`_grow_unwritten`), and each chunk is read into its place without the lock:
    no zero-fill and no second copy (reading into a small buffer and appending it, as
    before, copied the gigabyte once more with the lock held: 0.82-0.88 against
    0.63-0.67 s of CPU for the 1 GB file). The chunks go up to the size the file had
    when opened; what a writer added meanwhile is read once at the end, so a file that
    keeps growing cannot keep this loop going, and a file that shrank meanwhile ends
    the loop early and the buffer is cut to what was read (nothing unwritten is kept).

    ``head``: the file's first bytes, already read when its format was decided (at
    ``since``): the read goes on after them, unless the file was replaced or rewritten
    since (another inode, time or a smaller size), when it starts again from the start.
    """
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        size = st.st_size
        buf = bytearray(head if since is not None and _same_file(st, since, len(head)) else b"")
        have = len(buf)
        fh.seek(have)
        if size > have:
            _grow_unwritten(buf, size)
            hold_malloc_threshold()
            view = memoryview(buf)
            try:
                while have < size and (
                    got := fh.readinto(view[have : min(have + READ_CHUNK, size)])
                ):
                    have += got
            finally:
                view.release()
            del buf[have:]  # (a file that shrank meanwhile: only what was read)
        buf += fh.read()
    return buf


def _grow_unwritten(buf: bytearray, size: int) -> None:
    """Grow ``buf`` to ``size`` bytes without writing the new ones (the caller fills
    them): CPython's ``PyByteArray_Resize``, part of its C API, which reallocates
    without zero-filling. Through ctypes, imported here: only a big read needs it."""
    import ctypes

    prototype = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_ssize_t)
    resize = prototype(("PyByteArray_Resize", ctypes.pythonapi))
    if resize(buf, size) != 0:  # (ctypes raises the C API's error first, e.g. MemoryError)
        raise MemoryError(f"cannot grow a buffer to {size} bytes")


@functools.cache
def hold_malloc_threshold() -> None:
    """Keep glibc's malloc serving blocks up to 16 MB from its heap, and its heap's top
    until 32 MB are free, as it does by itself once a block that size was freed.

    Why: glibc starts by mapping every block from 128 KB up afresh (faulted in and
    zeroed by the kernel on first use, unmapped when freed) and raises that limit to
    the size of the largest mapped block freed so far. The big read used to free its
    16 MB chunk and so raised it early; reading straight into place frees none, and the
    numpy work after a load (the text index's build: 1.9 -> 2.6 s of CPU at 100,000
    effects) then paid page faults on its temporaries. Only on glibc; once a process."""
    try:  # asks the C library itself (platform.libc_ver reads the whole interpreter binary)
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):  # not a glibc system (or no confstr)
        return
    if not libc.startswith("glibc"):
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, READ_CHUNK)
    mallopt(_M_TRIM_THRESHOLD, 2 * READ_CHUNK)


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
