"""Checks that a test left no child process and no file descriptor behind."""

from __future__ import annotations

import os


def open_fds() -> set[str]:
    """This process's open file descriptors (empty where /proc is not there)."""
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


def no_children_left() -> bool:
    """True when this process has no child left to reap (none running, none a zombie)."""
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False
