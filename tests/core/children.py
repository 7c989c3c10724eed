"""Checks that a test left no child process and no file descriptor behind, and a wait for
the threads an earlier test let go to end before a test that forks."""

from __future__ import annotations

import os
import threading
import time


def open_fds() -> set[str]:
    """This process's open file descriptors (empty where /proc is not there)."""
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


# Servers a session fixture keeps for the whole run (the S3 server): children of this
# process on purpose, stopped by their fixture at the end, so not a test's leftover.
SESSION_CHILDREN: set[int] = set()


def _children() -> set[int] | None:
    """This process's children (running or zombie), or None where /proc cannot say."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as listing:
                found.update(int(pid) for pid in listing.read().split())
    except OSError:
        return None
    return found


def no_children_left() -> bool:
    """True when this process has no child left to reap (none running, none a zombie)
    other than the session's servers."""
    children = _children()
    if children is not None:
        return not (children - SESSION_CHILDREN)
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def wait_until_alone(timeout_s: float = 10.0) -> list[str]:
    """Wait, bounded, until this process runs no thread but the main one; the names of
    those still running when the time is up (empty when alone).

    Why: the checksum forks only a process with one thread, and a thread an earlier test
    let go may still be ending (the mapped files' watcher ends within its 50 ms poll of
    the last mapping's end), so a test that must fork waits for it instead of failing."""
    deadline = time.monotonic() + timeout_s
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    return [t.name for t in threading.enumerate() if t is not threading.main_thread()]
