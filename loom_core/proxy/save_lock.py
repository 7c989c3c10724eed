"""One running proxy per ``--save``: the recording proxy holds a lock that a second one sees.

Why: the desktop's Proxy ▸ Start once proposed the save path of a proxy that was still
recording (its trace is written only at the end, so the name looked free). The second
proxy then emptied the first one's journal, appended to its sidecar, and the two wrote
one trace: both recordings were spoiled. A sidecar without its end marker cannot tell
a live session from a crashed one, so the file alone is not enough.

How: while its sidecar is open the proxy holds an exclusive advisory lock (``flock``)
on ``<base>.exchanges.jsonl``; :func:`in_use` tries a shared one. The kernel drops the
lock when the process ends, also on ``kill -9``, so a crashed session's files are still
recovered as before. Where ``fcntl`` is missing (Windows) nothing is locked and
:func:`in_use` says False.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


class SaveLock:
    """The recording proxy's lock on its sidecar; :meth:`release` when the sidecar closes."""

    def __init__(self, sidecar: str | os.PathLike[str]) -> None:
        self._fd: int | None = None
        if fcntl is None:
            return
        fd = os.open(sidecar, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # taken meanwhile: the start's check already refused the usual case
            os.close(fd)
            return
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def in_use(sidecar: str | os.PathLike[str]) -> bool:
    """Whether a running proxy records to the session whose sidecar is ``sidecar``."""
    if fcntl is None or not Path(sidecar).exists():
        return False
    try:
        fd = os.open(sidecar, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # a file system without locks: nothing to say
        return False
    finally:
        os.close(fd)  # closing drops a shared lock taken here
    return False
