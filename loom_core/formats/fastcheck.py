"""Verify a big trace's checksum on two cores (loom-format.md §2).

The checksum needs the whole document decoded and re-serialised canonically
(sorted keys, Python's separators and escapes): on a 100 MB trace that is most of a
second of single-threaded work. :mod:`.checksum_plan` cuts the bulky lists into
chunks whose texts can be computed anywhere; here a forked child computes them from
the front while the caller does its own work (loading, summing up), then the caller
computes them from the back until the two meet, hashing the child's text as it comes.
Where ``fork`` is unavailable, or a file needs Python's own JSON reader (NaN), the
plain serial check runs instead; both give identical answers.
"""

from __future__ import annotations

import gc
import mmap
import os
import signal
import struct
import threading
from typing import NoReturn

import msgspec

from loom_core.formats.checksum_plan import (
    Hasher,
    Plan,
    canon_items,
    make_plan,
    serial_text_checksum,
)
from loom_core.formats.gc_pause import gc_paused

MIN_PARALLEL_BYTES = 8 << 20
_FAILED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
_REPORT = struct.Struct("<Q")  # the length of the child's next chunk, in order, in the sink
_CLAIM = struct.Struct("<Q")  # shared: the child's next chunk (at 0), the caller's lowest (at 8)


class ParallelChecksum:
    """A checksum whose chunks a forked child computes while the caller works.

    The child writes each chunk's text into an unlinked file (never a pipe, which
    would stall it while the caller is busy loading) and reports it on a pipe. Who
    computes which chunk is settled at run time through two counters in shared memory,
    so neither process idles whatever the machine's load. The counters are hints only:
    a chunk both did is hashed once, and one neither did (the child died) the caller
    computes at the end, so every failure still gives the serial answer.
    """

    def __init__(self, plan: Plan, pid: int, reports: int, sink: int, claims: mmap.mmap) -> None:
        self.plan, self.pid = plan, pid
        self._reports, self._sink, self._claims = reports, sink, claims
        self._done: dict[int, tuple[int, int]] = {}  # the child's chunks: offset, length
        self._reported = self._end = 0  # the child's chunks so far; their end in the sink
        self._own: dict[int, bytes] = {}  # the caller's chunks, not hashed yet
        self._pending = b""  # a report read in part
        self._eof = False
        self._open = True

    @classmethod
    def start(cls, data: bytes) -> ParallelChecksum | None:
        """Fork the child, or None when this process should use the serial path."""
        if (
            not hasattr(os, "fork")
            or len(data) < MIN_PARALLEL_BYTES
            or threading.active_count() > 1
        ):
            return None  # forking a threaded process is unsafe; small files are fast anyway
        try:
            plan = make_plan(data)
        except _FAILED:
            return None  # not a JSON object: the serial path says so
        if len(plan.chunks) < 2:
            return None
        claims = mmap.mmap(-1, 2 * _CLAIM.size)  # anonymous and shared with the child
        _CLAIM.pack_into(claims, _CLAIM.size, len(plan.chunks))
        fds: list[int] = []
        try:
            fds.append(_sink())
            fds.extend(os.pipe())
            pid = os.fork()
        except OSError:
            for fd in fds:
                os.close(fd)
            claims.close()
            return None
        sink, reports, write_end = fds
        if pid == 0:
            _child(plan, reports, write_end, sink, claims)
        os.close(write_end)
        os.set_blocking(reports, False)
        return cls(plan, pid, reports, sink, claims)

    def result(self) -> str | None:
        """``sha256:…`` of the trace without its checksum, or None (use Python's reader)."""
        try:
            with gc_paused():
                return self._finish()
        except _FAILED:
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Stop and reap the child and free what it shared; safe to call twice."""
        if not self._open:
            return
        self._open = False
        os.kill(self.pid, signal.SIGKILL)  # done or not needed; not reaped, so still ours
        os.waitpid(self.pid, 0)
        os.close(self._reports)
        os.close(self._sink)
        self._claims.close()

    def _finish(self) -> str:
        plan = self.plan
        hasher = Hasher(plan, plan.small_texts())
        index = len(plan.chunks) - 1
        while index >= _CLAIM.unpack_from(self._claims, 0)[0]:  # the child has not got here
            _CLAIM.pack_into(self._claims, _CLAIM.size, index)
            self._own[index] = canon_items(plan.chunks[index])
            self._collect()
            hasher.feed(self._text)
            index -= 1
        os.set_blocking(self._reports, True)
        while not hasher.feed(self._text) and not self._eof:
            self._collect()  # wait for the child's next report, or its end
        hasher.feed(lambda i: self._text(i) or canon_items(plan.chunks[i]))  # a dead child's
        return hasher.checksum()

    def _collect(self) -> None:
        """Take in the child's reports that have arrived (waits for one if blocking)."""
        try:
            got = os.read(self._reports, 1 << 16)
        except BlockingIOError:
            return
        if not got:
            self._eof = True
            return
        buf = self._pending + got
        whole = len(buf) - len(buf) % _REPORT.size
        for (length,) in _REPORT.iter_unpack(buf[:whole]):
            self._done[self._reported] = (self._end, length)
            self._reported, self._end = self._reported + 1, self._end + length
        self._pending = buf[whole:]

    def _text(self, index: int) -> bytes | None:
        """Chunk ``index``'s text if either process has it (each is hashed once)."""
        if index in self._own:
            return self._own.pop(index)
        if index not in self._done:
            return None
        offset, length = self._done.pop(index)
        text = os.pread(self._sink, length, offset)
        return text if len(text) == length else None


def _sink() -> int:
    """An unlinked file for the child's texts: in memory where the OS offers that."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("loom-checksum")
    import tempfile

    with tempfile.TemporaryFile() as fh:
        return os.dup(fh.fileno())


def _child(plan: Plan, read_end: int, reports: int, sink: int, claims: mmap.mmap) -> NoReturn:
    """In the forked child: chunks from the front until the caller's claims; never returns."""
    code = 1
    try:
        os.close(read_end)
        gc.disable()
        offset = 0
        for index in range(len(plan.chunks)):
            if index >= _CLAIM.unpack_from(claims, _CLAIM.size)[0]:
                break  # the caller has it
            _CLAIM.pack_into(claims, 0, index + 1)
            text = canon_items(plan.chunks[index])
            view = memoryview(text)
            while view:
                view = view[os.pwrite(sink, view, offset + len(text) - len(view)) :]
            os.write(reports, _REPORT.pack(len(text)))
            offset += len(text)
        code = 0
    finally:
        os._exit(code)


def serial_checksum(data: bytes) -> str | None:
    """The same checksum in this process alone (no fork), or None (use Python's reader)."""
    with gc_paused():
        try:
            return serial_text_checksum(make_plan(data))
        except _FAILED:
            return None


def parallel_checksum(data: bytes) -> str | None:
    """``sha256:…`` of ``data`` (a trace) without its checksum, or None to use Python's
    reader: on two cores when it pays, else in this process."""
    job = ParallelChecksum.start(data)
    return job.result() if job is not None else serial_checksum(data)
