"""A big trace's file mapped instead of read, its pages let go after each pass over them.

Why: read into the process, a big run's file stayed resident whole for as long as its
tab was open (1× the file: at 100,000 effects most of the window's memory above Qt's).
Mapped, the load, the text index's build and a filter's scan each touch the pages they
pass and then let them go (:func:`release_pages`, ``MADV_DONTNEED``): the file stays in
the kernel's page cache, shared and evictable, and a view's later read faults back just
the pages it needs. The effects' payloads stay views (into the mapping now), as before.

Why a lease: a mapped file that another program cuts short (a ``truncate``, a rewrite in
place) turns the next read of a page past its new end into ``SIGBUS``, which would kill
the window and everything open in it. A read lease (Linux's ``F_SETLEASE``) makes the
kernel hold any other program's open for writing, or truncate, until the lease is let go
(up to ``/proc/sys/fs/lease-break-time``, 45 s by default). A thread that lives while
mappings do looks at their leases every :data:`POLL_S`; on a lease being broken it
copies that mapping into anonymous memory at the same addresses (``mremap``: every view
stays valid and no longer depends on the file) and lets the lease go. The run in memory
is then 1× the file again, only for a file somebody writes while it is open.

Why a thread, not the ``SIGIO`` the kernel sends: a Python signal handler runs on the
main thread only, between two of its bytecodes; a writer on that thread (the window's
own, a test's) would wait in its ``open`` for a handler that cannot run, then, the
lease broken by time, cut the file under the mapping. ``SIGIO``, whose default action
ends the process, is ignored instead (:func:`enable`, on the main thread).

Where no lease can be taken (not Linux, a file another user owns, a file open for
writing somewhere, a file system without leases, or mapping not enabled: the command
line), :func:`map_file` gives None and the caller reads the file as before.
"""

from __future__ import annotations

import contextlib
import functools
import mmap
import os
import signal
import sys
import threading
import weakref
from typing import Any

_MREMAP_MAYMOVE, _MREMAP_FIXED = 1, 2  # Linux's mremap flags (not in the mmap module)
_LIVE: weakref.WeakSet[MappedFile] = weakref.WeakSet()
_state: dict[str, Any] = {"previous": None, "on": False, "watcher": None}
_WATCH = threading.Lock()  # guards _LIVE's additions and the watching thread's start and end
_STOP = threading.Event()
POLL_S = 0.05  # between two looks at the leases: a writer waits at most this (and the copy)


class MappedFile(mmap.mmap):
    """A copy-on-write mapping of a whole file, with the descriptor that holds its lease.

    Copy-on-write: the progressive load swaps two separator bytes of a run for
    brackets while it decodes that run in place (``progressive._decode_ranges``); only
    those pages become the process's own, and they are put back before being let go."""

    fd: int
    pinned: bool  # copied out of the file (the lease was broken): never let go again
    lock: threading.RLock

    def release(self) -> None:
        """Let the mapped pages go (they come back from the page cache when read)."""
        with self.lock:
            if not self.pinned and not self.closed:
                self.madvise(mmap.MADV_DONTNEED)

    def pin(self) -> None:
        """Copy the mapping into anonymous memory at the same addresses, then let the
        lease go: what another program now writes to the file no longer reaches us."""
        with self.lock:
            if not self.pinned and not self.closed:
                _copy_in_place(self)
                self.pinned = True
        with contextlib.suppress(OSError):
            import fcntl

            fcntl.fcntl(self.fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)


def enable() -> bool:
    """Let :func:`map_file` map files from now on: ``SIGIO`` (a lease's break notice)
    ignored, since the watching thread asks the leases instead. Only on Linux and on
    the main thread (where signal dispositions are set); False where it cannot."""
    if _state["on"]:
        return True
    if not sys.platform.startswith("linux") or _libc() is None:
        return False
    try:
        _state["previous"] = signal.signal(signal.SIGIO, signal.SIG_IGN)
    except ValueError:  # not the main thread
        return False
    _state["on"] = True
    return True


def disable() -> None:
    """Map no more files; the watching thread is stopped and the mapped files copied out
    first, since a lease broken once ``SIGIO`` is not ignored would end the process."""
    if not _state["on"]:
        return
    with _WATCH:
        thread, _state["watcher"] = _state["watcher"], None
        _STOP.set()
    if thread is not None:
        thread.join()
    _STOP.clear()
    for mapped in list(_LIVE):
        mapped.pin()
    signal.signal(signal.SIGIO, _state["previous"])
    _state["on"] = False


def map_file(path: str) -> MappedFile | None:
    """``path`` mapped under a read lease, or None when it cannot be (see the module)."""
    if not _state["on"]:
        return None
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None  # the read that follows names the cause
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        size = os.fstat(fd).st_size
        mapped = MappedFile(fd, size, access=mmap.ACCESS_COPY) if size else None
    except (OSError, ValueError):  # no lease here (EAGAIN, EACCES, EINVAL…): read instead
        mapped = None
    if mapped is None:
        os.close(fd)
        return None
    mapped.fd, mapped.pinned, mapped.lock = fd, False, threading.RLock()
    weakref.finalize(mapped, os.close, fd)  # the lease goes with the descriptor
    with _WATCH:
        _LIVE.add(mapped)
        if _state["watcher"] is None:
            watcher = threading.Thread(target=_watch, name="loom-leases", daemon=True)
            _state["watcher"] = watcher
            watcher.start()
    return mapped


def release_pages(source: object) -> None:
    """Let a mapped source's pages go (nothing for bytes): after a pass over all of it."""
    if isinstance(source, MappedFile):
        source.release()


def writing(source: object) -> contextlib.AbstractContextManager[Any]:
    """Held while the load writes into ``source`` (its in-place decode): no release then."""
    return source.lock if isinstance(source, MappedFile) else contextlib.nullcontext()


def _watch() -> None:
    """The watching thread: copies out each mapping whose lease is being broken; ends
    when no mapping is left (the next :func:`map_file` starts another) or on
    :func:`disable`."""
    import fcntl

    while not _STOP.wait(POLL_S):
        with _WATCH:
            live = list(_LIVE)
            if not live:
                _state["watcher"] = None
                return
        for mapped in live:
            try:
                breaking = fcntl.fcntl(mapped.fd, fcntl.F_GETLEASE) == fcntl.F_UNLCK
            except OSError:
                breaking = True
            if breaking and not mapped.pinned:
                try:
                    mapped.pin()
                except (OSError, MemoryError) as err:  # the writer waits out the lease's time
                    print(f"loom: cannot keep a mapped file's copy: {err}", file=sys.stderr)
        del live, mapped  # (no mapping kept alive by this frame while it sleeps)


@functools.cache
def _libc() -> Any:
    """The C library's ``mmap``, ``mremap`` and ``munmap``, typed; None without them.
    (ctypes imported here, as :mod:`.read_file` does: a window's start does not need it.)"""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fns = libc.mmap, libc.mremap, libc.munmap
    except (OSError, AttributeError):
        return None
    vp, size = ctypes.c_void_p, ctypes.c_size_t
    int_ = ctypes.c_int
    fns[0].restype, fns[0].argtypes = vp, [vp, size, int_, int_, int_, ctypes.c_long]
    fns[1].restype, fns[1].argtypes = vp, [vp, size, size, ctypes.c_int, vp]
    fns[2].restype, fns[2].argtypes = int_, [vp, size]
    return libc


def _copy_in_place(mapped: MappedFile) -> None:
    """Replace ``mapped``'s pages with an anonymous copy at the same addresses: copied
    while the file is still whole (its writer waits on the lease), then moved over the
    mapping in one ``mremap``, so a reader in another thread sees the same bytes
    throughout. The mmap object unmaps the range when it closes, as before."""
    import ctypes

    libc, size = _libc(), len(mapped)
    holder = ctypes.c_char.from_buffer(mapped)
    at = ctypes.addressof(holder)
    del holder  # (an export would keep the mapping from closing)
    prot, flags = mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    copy = libc.mmap(None, size, prot, flags, -1, 0)
    if copy in (None, ctypes.c_void_p(-1).value):  # (MAP_FAILED)
        raise MemoryError(f"cannot copy a {size}-byte mapped file out of it")
    ctypes.memmove(copy, at, size)
    moved = libc.mremap(copy, size, size, _MREMAP_MAYMOVE | _MREMAP_FIXED, at)
    if moved != at:
        libc.munmap(copy, size)
        raise OSError(ctypes.get_errno(), "cannot move the copy over the mapped file")
