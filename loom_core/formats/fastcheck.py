"""Verify a big trace's checksum on two cores (loom-format.md §2).

The checksum needs the whole document decoded and re-serialised canonically
(sorted keys, Python's separators and escapes): on a 100 MB trace that is most of a
second of single-threaded work. :mod:`.checksum_plan` cuts the bulky lists into
chunks whose texts can be computed anywhere. Here a child forked as soon as the file
is read plans and computes them from the front, hashing as it goes, while the caller
does its own work (loading, summing up); if the child is far behind by then, the
caller computes chunks from the back until the two meet and hands its texts to the
child, which finishes the hash. Where ``fork`` is unavailable, or a file needs
Python's own JSON reader (NaN), the plain serial check runs instead; both give
identical answers.
"""

from __future__ import annotations

import gc
import mmap
import os
import re
import signal
import struct
import threading
from typing import NoReturn

import msgspec

from loom_core.formats.canonical import CHECKSUM_PREFIX
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
_STOP = struct.Struct("<Q")  # child -> caller: the first chunk it did not do (then the digest)
_SENT = struct.Struct("<QQQ")  # caller -> child: a chunk's index, offset in the sink, length
# shared: the child's next chunk (at 0), the caller's lowest (at 8), the child's count (at 16)
_CLAIM = struct.Struct("<Q")
_UNCLAIMED = 1 << 62
# The caller helps (makes its own plan, computes chunks from the back) only when the child has
# done less than this share: the plan costs about a third of the chunks' work.
HELP_BELOW = 0.5
_DIGEST_LEN = len(CHECKSUM_PREFIX) + 64
_OBJECT = re.compile(rb"[ \t\r\n]*\{")


class ParallelChecksum:
    """A checksum whose chunks a forked child plans, computes and hashes while the caller works.

    The fork comes first, so the caller's own work starts at once; when the caller asks
    for the result and the child is far behind, the caller helps. Who computes which
    chunk is then settled through two counters in shared memory; they are hints only:
    the child says where it stopped and the caller supplies every chunk from there (a
    chunk both did is hashed once). The caller's texts go through an unlinked file, the
    notes through pipes. If the child dies, the caller computes the rest alone.
    """

    def __init__(self, data: bytes, pid: int, fds: tuple[int, int, int], claims: mmap.mmap) -> None:
        self.data, self.pid, self._claims = data, pid, claims
        self._plan: Plan | None = None
        self._from_child, self._to_child, self._sink = fds
        self._sent: dict[int, tuple[int, int]] = {}  # the caller's chunks: offset, length
        self._end = 0  # of the caller's texts in the sink
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
        if not _OBJECT.match(data):
            return None  # not a JSON object: the serial path says so
        claims = mmap.mmap(-1, 3 * _CLAIM.size)  # anonymous and shared with the child
        _CLAIM.pack_into(claims, _CLAIM.size, _UNCLAIMED)
        fds: list[int] = []
        try:
            fds.append(_sink())
            fds.extend(os.pipe())  # child -> caller
            fds.extend(os.pipe())  # caller -> child
            pid = os.fork()
        except OSError:
            for fd in fds:
                os.close(fd)
            claims.close()
            return None
        sink, up_read, up_write, down_read, down_write = fds
        if pid == 0:
            _child(data, claims, sink, up_write, down_read, (up_read, down_write))
        os.close(up_write)
        os.close(down_read)
        return cls(data, pid, (up_read, down_write, sink), claims)

    @property
    def plan(self) -> Plan:
        """The same plan as the child's, made here when first needed (raises msgspec's errors)."""
        if self._plan is None:
            self._plan = make_plan(self.data)
        return self._plan

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
        for fd in (self._from_child, self._to_child, self._sink):
            os.close(fd)
        self._claims.close()

    def _finish(self) -> str:
        try:
            index = self._help() if self._child_is_behind() else None
            if index is not None and index < 0:
                return self._alone()  # every chunk done here: the child is not needed
            stop = self._read(_STOP.size)
            if len(stop) < _STOP.size:
                return self._alone()  # the child died
            if index is None:  # the child's count, published before it wrote where it stopped
                index = _CLAIM.unpack_from(self._claims, 2 * _CLAIM.size)[0] - 1
            for gap in range(_STOP.unpack(stop)[0], index + 1):
                self._send(gap)  # claimed by neither (the counters are hints)
        except BrokenPipeError:
            return self._alone()
        digest = self._read(_DIGEST_LEN + 1).decode("ascii", "replace")
        return digest if len(digest) == _DIGEST_LEN else self._alone()

    def _child_is_behind(self) -> bool:
        done, _lowest, count = (
            _CLAIM.unpack_from(self._claims, k * _CLAIM.size)[0] for k in range(3)
        )
        return not count or done < HELP_BELOW * count

    def _help(self) -> int:
        """Chunks from the back until the child's; the last one not done here."""
        index = len(self.plan.chunks) - 1
        while index >= _CLAIM.unpack_from(self._claims, 0)[0]:  # the child is not here yet
            _CLAIM.pack_into(self._claims, _CLAIM.size, index)
            self._send(index)
            index -= 1
        return index

    def _send(self, index: int) -> None:
        """Compute chunk ``index``, put it in the sink and tell the child where."""
        text = canon_items(self.plan.chunks[index])
        _write_at(self._sink, text, self._end)
        self._sent[index] = (self._end, len(text))
        self._end += len(text)
        os.write(self._to_child, _SENT.pack(index, self._end - len(text), len(text)))

    def _read(self, size: int) -> bytes:
        """Up to ``size`` bytes from the child, fewer only at its end."""
        got = b""
        while len(got) < size:
            part = os.read(self._from_child, size - len(got))
            if not part:
                break
            got += part
        return got

    def _alone(self) -> str:
        """The checksum without the child: the chunks sent so far, the others computed."""
        hasher = Hasher(self.plan, self.plan.small_texts())
        hasher.feed(self._own_text)
        return hasher.checksum()

    def _own_text(self, index: int) -> bytes:
        if index in self._sent:
            offset, length = self._sent[index]
            text = os.pread(self._sink, length, offset)
            if len(text) == length:
                return text
        return canon_items(self.plan.chunks[index])


def _sink() -> int:
    """An unlinked file for the caller's texts: in memory where the OS offers that."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("loom-checksum")
    import tempfile

    with tempfile.TemporaryFile() as fh:
        return os.dup(fh.fileno())


def _write_at(fd: int, text: bytes, offset: int) -> None:
    view = memoryview(text)
    while view:
        view = view[os.pwrite(fd, view, offset + len(text) - len(view)) :]


def _child(
    data: bytes, claims: mmap.mmap, sink: int, up: int, down: int, callers: tuple[int, int]
) -> NoReturn:
    """In the forked child: the plan, then chunks from the front, hashed as they come,
    until the caller's claims; then the caller's chunks; then the digest. Never returns."""
    code = 1
    try:
        for fd in callers:
            os.close(fd)
        gc.disable()
        plan = make_plan(data)  # not a JSON object: the caller finds that out by itself
        _CLAIM.pack_into(claims, 2 * _CLAIM.size, len(plan.chunks))
        hasher = Hasher(plan, plan.small_texts())
        stop = _front(plan, claims, hasher)
        os.write(up, _STOP.pack(stop))
        sent: dict[int, bytes] = {}
        with os.fdopen(down, "rb") as notes:
            while not hasher.feed(lambda i: sent.pop(i, None)):
                index, offset, length = _SENT.unpack(notes.read(_SENT.size))
                text = os.pread(sink, length, offset)
                if len(text) != length:
                    raise EOFError("the caller's text is not all there")
                if index >= stop:  # (one both did is hashed already)
                    sent[index] = text
        os.write(up, hasher.checksum().encode("ascii"))
        code = 0
    finally:
        os._exit(code)


def _front(plan: Plan, claims: mmap.mmap, hasher: Hasher) -> int:
    """The child's share: chunks in order until one the caller claimed; where it stopped."""
    stop = 0
    while stop < len(plan.chunks) and stop < _CLAIM.unpack_from(claims, _CLAIM.size)[0]:
        _CLAIM.pack_into(claims, 0, stop + 1)
        hasher.feed({stop: canon_items(plan.chunks[stop])}.get)  # the hash waits for just it
        stop += 1
    return stop


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
