"""Wait for a change of one file on Linux's inotify, in the waiting thread itself.

Why not watchdog here: watchdog delivers an event through threads of its own (an inotify
reader, a dispatcher, an emitter and the observer), so each line a run flushes woke four
Python threads of the window's process before the tailer's, each taking the interpreter
lock the GUI thread needs to show the line's row. On a loaded machine a thread can be
preempted while it holds that lock, and the row waits for it (``benchmarks/live_probe.py``
measures that share). Here the tailer's own thread sleeps in ``poll`` on the inotify
descriptor (no lock held) and reads the events when it wakes: one thread per followed
file. Other platforms, or a kernel that refuses (no watches left), fall back to watchdog.

The directory is watched, not the file, so a file that does not exist yet, is deleted,
re-created or replaced by a rename is still seen; only events naming the file (or a full
queue: anything may have changed) wake the waiter. Another thread wakes it with
:meth:`FileWatch.wake` (a hint, a stop).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
import sys
import threading
from functools import cache
from typing import Any

__all__ = ["FileWatch", "watch_file"]

# <sys/inotify.h>
_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _Q_OVERFLOW, _IGNORED = 0x400, 0x800, 0x4000, 0x8000
_MASK = _MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE
_MASK |= _DELETE_SELF | _MOVE_SELF
_ANYTHING = _Q_OVERFLOW | _DELETE_SELF | _MOVE_SELF | _IGNORED  # not about a name: look
_NONBLOCK, _CLOEXEC = os.O_NONBLOCK, 0o2000000
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name


@cache
def _libc() -> Any:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    return libc


class FileWatch:
    """An inotify watch of one file's directory, with a pipe to wake the waiter."""

    def __init__(self, path: str) -> None:
        full = os.path.abspath(path)
        folder = os.path.dirname(full)
        names = {os.path.basename(full)}
        real = os.path.realpath(full)
        if os.path.dirname(real) == folder:
            names.add(os.path.basename(real))
        self._names = {os.fsencode(n) for n in names}
        libc = _libc()
        fd = libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        if libc.inotify_add_watch(fd, os.fsencode(folder), _MASK) < 0:
            err = ctypes.get_errno()
            os.close(fd)
            raise OSError(err, f"{os.strerror(err)}: {folder}")
        self._fd = fd
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._lock = threading.Lock()  # wake() and close() from different threads
        self._closed = False
        self._poll = select.poll()  # not select(): it fails on descriptors past 1023
        self._poll.register(fd, select.POLLIN)
        self._poll.register(self._wake_r, select.POLLIN)

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` s; True when the file may have changed or :meth:`wake`
        was called (the thread holds no lock meanwhile)."""
        ready = {fd for fd, _event in self._poll.poll(max(0.0, timeout) * 1000)}
        woken = False
        if self._wake_r in ready:
            _drain(self._wake_r)
            woken = True
        if self._fd in ready:
            woken = self._names_me(_drain(self._fd)) or woken
        return woken

    def wake(self) -> None:
        """Make :meth:`wait` return now (any thread; nothing after :meth:`close`)."""
        with self._lock:
            if not self._closed:
                try:
                    os.write(self._wake_w, b"!")
                except BlockingIOError:  # the pipe is full of wake-ups already
                    pass

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for fd in (self._fd, self._wake_r, self._wake_w):
                os.close(fd)

    def _names_me(self, events: bytes) -> bool:
        at = 0
        while at + _EVENT.size <= len(events):
            _wd, mask, _cookie, size = _EVENT.unpack_from(events, at)
            name = events[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")
            at += _EVENT.size + size
            if mask & _ANYTHING or name in self._names:
                return True
        return False


def _drain(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def watch_file(path: str) -> FileWatch | None:
    """A watch of ``path`` (its directory must exist), or None where inotify is not
    available (another platform) or refuses (no watches or instances left)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return FileWatch(path)
    except (OSError, AttributeError):  # AttributeError: a libc without inotify
        return None
