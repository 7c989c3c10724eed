"""What a follower has read of a growing file, and whether the file on disk still starts so.

Why one object: the journal tail (:mod:`loom_core.live.follow`) and the foreign line
formats' tail (:mod:`loom_core.live.appended`) both read a file on from an offset, and both
must notice, cheaply, when the file was rewritten instead of appended to: loom-harness
truncates and rewrites a journal in place at the start of every live run (same inode; the
new content may already be longer than what was read), an editor or a copy replaces a
file (a new inode), a file is cut short (shorter than the offset). Besides the inode and
the size, the first and the last :data:`CHECK_BYTES` read are compared with the bytes now
at those places: two reads of at most 8 KiB, whatever the file's size. A rewrite that
reproduces the bytes at both places and only changes bytes between them is not seen; no
writer we follow does that (each appends, or truncates and writes from the start).
"""

from __future__ import annotations

import os
from typing import IO

CHECK_BYTES = 4096  # how much of the start and of the end of what was read is re-checked


def read_at(f: IO[bytes], offset: int, size: int) -> bytes:
    """``size`` bytes of ``f`` from ``offset`` (-1: to the end)."""
    f.seek(offset)
    return f.read(size)


class ReadPrefix:
    """The bytes read so far of one file: how many, and enough of them to see a rewrite."""

    def __init__(self) -> None:
        self.pos = 0  # bytes read from the file (a partial last line included)
        self.ident: tuple[int, int] | None = None  # (device, inode) at the last read
        self.first = b""  # the first bytes read (up to CHECK_BYTES)
        self.last = b""  # the last bytes read, ending at pos

    def rewritten(self, f: IO[bytes], st: os.stat_result) -> bool:
        """Whether the open file ``f`` (``st`` its fstat) no longer starts with what was read."""
        if self.pos == 0:
            return False
        if (st.st_dev, st.st_ino) != self.ident or st.st_size < self.pos:
            return True
        if read_at(f, 0, len(self.first)) != self.first:
            return True
        return self.pos > len(self.first) and (
            read_at(f, self.pos - len(self.last), len(self.last)) != self.last
        )

    def took(self, data: bytes, st: os.stat_result) -> None:
        """``data`` was read from ``pos`` of the file ``st`` describes."""
        self.ident = (st.st_dev, st.st_ino)
        self.pos += len(data)
        if len(self.first) < CHECK_BYTES:
            self.first = (self.first + data[:CHECK_BYTES])[:CHECK_BYTES]
        self.last = (self.last + data[-CHECK_BYTES:])[-CHECK_BYTES:]
