"""Checks that a test left no child process and no file descriptor behind."""

from __future__ import annotations

import os


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
