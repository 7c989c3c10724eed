"""Append whole lines to a file, or nothing: a failed write leaves the file as it was.

Why not a Python file object: a buffered file keeps the bytes a failed flush could
not write and writes them with the next line, so after a full disk frees up a stale
half line would be glued to a good one (both unreadable, and a rolled-back record
would reappear); a disk that fills mid-write leaves a partial line either way. Here
each append is one unbuffered ``write()`` loop from the file's known end. When it
fails (ENOSPC, EDQUOT, EFBIG, EIO...) the file is cut back to that end
(``ftruncate``) and the error raised, so the caller can refuse what it was about to
confirm. A caller that wrote more than one file can cut an earlier one back with
:meth:`AppendFile.cut`. If even the cut fails, the next append starts with a
newline, so the torn bytes stay a line of their own that every reader skips.

Written means handed to the OS (it survives ``kill -9``, not a power cut), unless
``fsync`` asks for each append to reach the disk.
"""

from __future__ import annotations

import contextlib
import errno
import os

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0)
_write = os.write  # module names, so tests can make the disk fill up mid-line
_truncate = os.ftruncate


class AppendFile:
    """One file opened for appending (``truncate``: emptied first). Not thread-safe."""

    __slots__ = ("path", "fsync", "size", "_fd", "_torn")

    def __init__(self, path: str | os.PathLike[str], truncate: bool, fsync: bool = False) -> None:
        self.path = os.fspath(path)
        self.fsync = fsync
        self._fd: int | None = os.open(self.path, _FLAGS | (os.O_TRUNC if truncate else 0), 0o666)
        self.size = os.fstat(self._fd).st_size  # where the last good append ended
        self._torn = False  # a failed append could not be cut back

    def append(self, data: bytes) -> None:
        """Write ``data`` whole, or raise ``OSError`` with the file as it was."""
        fd = self._fd
        if fd is None:
            raise ValueError(f"{self.path}: closed")
        if self._torn:
            data = b"\n" + data
        view, done = memoryview(data), 0
        try:
            while done < len(data):
                n = _write(fd, view[done:])
                if n <= 0:  # not seen on a regular file; never loop on it
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += n
            if self.fsync:
                os.fsync(fd)
        except OSError:
            if done:
                self.cut(self.size)
            raise
        self.size += len(data)
        self._torn = False

    def cut(self, size: int) -> None:
        """Drop everything after ``size`` bytes (an append this caller takes back)."""
        if self._fd is None:
            return
        try:
            _truncate(self._fd, size)
        except OSError:
            self._torn = True  # the next append starts a line of its own
            with contextlib.suppress(OSError):
                self.size = os.fstat(self._fd).st_size
            return
        self.size = size

    def close(self) -> None:
        """Release the descriptor (idempotent); every append is already in the OS."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
