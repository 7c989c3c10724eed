"""Is anyone still writing this journal? What this machine can tell, and when it cannot.

Why: a journal whose writer died mid-run looks exactly like one whose writer is
thinking; only the writer's absence tells them apart. loom-harness and our proxy
both keep the journal open for writing from its header until the run ends, so
"no process holds it open for writing" means the run is over. That is knowable
only where the open files of the writer's processes can be listed: on Linux, for a
file owned by the current user (or as root), through ``/proc/<pid>/fdinfo``. Anywhere
else -- another OS, another user's file, a writer on another machine over a network
file system -- :func:`writer_present` says None (unknown) and callers must not
guess. A process of another user that writes our file is not seen either; that is
why the answer is "no process on this machine that we can see", and the caller
still waits for the file to be idle before believing it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["NO_WRITER", "PROBE_EVERY", "WriterWatch", "writer_present"]

PROBE_EVERY = 5.0  # seconds between looks for a writer while an idle run says "running"
NO_WRITER = "no process on this machine has the journal open for writing"
"""How a gone writer is known, in the words the live tab, ``watch`` and the Runs page share."""

_PROC = "/proc"
_ACCMODE = 0o3  # O_ACCMODE: 0 read-only, 1 write-only, 2 read-write


def _can_see_writers(st: os.stat_result) -> bool:
    if not sys.platform.startswith("linux") or not os.path.isdir(f"{_PROC}/self/fdinfo"):
        return False
    uid = os.geteuid()
    return uid == 0 or st.st_uid == uid


def _opened_for_writing(pid: str, fd: str) -> bool:
    try:
        with open(f"{_PROC}/{pid}/fdinfo/{fd}", "rb") as fh:
            for line in fh:
                if line.startswith(b"flags:"):
                    return int(line.split()[1], 8) & _ACCMODE != 0
    except (OSError, ValueError, IndexError):
        pass
    return False


def _holds(pid: str, name: str, target: tuple[int, int]) -> bool:
    """Whether process ``pid`` has the file ``name`` (device, inode ``target``) open for
    writing. The link text is compared first: a stat of every descriptor is 10x slower."""
    folder = f"{_PROC}/{pid}/fd"
    try:
        fds = os.listdir(folder)
    except OSError:  # gone meanwhile, or not ours to look at
        return False
    for fd in fds:
        try:
            if os.readlink(f"{folder}/{fd}") != name:
                continue
            st = os.stat(f"{folder}/{fd}")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == target and _opened_for_writing(pid, fd):
            return True
    return False


def writer_present(path: str | os.PathLike[str]) -> bool | None:
    """True: a process here has ``path`` open for writing; False: none that we can see;
    None: this cannot be known here (see the module docstring)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not _can_see_writers(st):
        return None
    target = (st.st_dev, st.st_ino)
    try:
        pids = [p for p in os.listdir(_PROC) if p.isdigit()]
    except OSError:
        return None
    name = os.path.realpath(path)
    return any(_holds(pid, name, target) for pid in pids)


class WriterWatch:
    """What a follower knows about its journal's writer: told by the owner, or looked for.

    Why a separate object: the follower's rules are about bytes; these are about
    processes and time, and are tested apart (``probe`` and ``clock`` injectable).
    """

    def __init__(
        self,
        path: str,
        idle_after: float,
        clock: Callable[[], float],
        probe: Callable[[str], bool | None] = writer_present,
    ) -> None:
        self.path = path
        self.idle_after = idle_after
        self._clock = clock
        self._probe = probe
        # the owner says the writer stopped (any thread): (why, whether an error ended it)
        self._note: tuple[str, bool] | None = None
        self._stopped: tuple[int, str, bool] | None = None  # (file size then, why, error)
        self._writing = False  # the owner says the writer writes (note_writing)
        self._present: bool | None = None  # the last look for a writer, and when
        self._looked_at: float | None = None

    def note_stopped(self, why: str, failed: bool = False) -> None:
        """The owner of the writer says it stopped (safe from any thread: one assignment);
        ``failed``: with an error (its agent crashed), which is then the run's outcome."""
        self._writing = False
        self._note = (why, failed)

    def note_writing(self) -> None:
        """The owner of the writer says it writes (the app's proxy runs): the run is still
        being written, whatever its last line says, until :meth:`note_stopped`."""
        self._writing = True

    @property
    def owned(self) -> bool:
        """Its owner says the writer writes (and has not said since that it stopped)."""
        return self._writing and self._note is None and self._stopped is None

    def at_read(self, size: int, rewritten: bool) -> None:
        """Take a note with the file's size then; later growth or a rewrite drops it (a
        writer is back)."""
        note, self._note = self._note, None
        if note is not None:
            self._stopped = (size, *note)
        elif self._stopped is not None and (rewritten or size > self._stopped[0]):
            self._stopped = None

    @property
    def error(self) -> str:
        """What its owner said ended the run with an error ("" none)."""
        return self._stopped[1] if self._stopped is not None and self._stopped[2] else ""

    @property
    def present(self) -> bool:
        """The last look found a process holding the file open for writing."""
        return self._present is True

    def changed(self) -> None:
        """New bytes: whatever was seen of the writer is stale."""
        self._present = self._looked_at = None

    def gone(self, idle: float, quiet_run: bool) -> str | None:
        """Why the writer is known to be gone, or None (present, or unknowable).

        ``quiet_run``: the run has content and says "running"; only then is a writer
        looked for, once the file has been idle ``idle_after`` s, every ``PROBE_EVERY``.
        """
        if self._stopped is not None:
            return self._stopped[1]
        if not quiet_run or idle < self.idle_after:
            return None
        now = self._clock()
        if self._looked_at is None or now - self._looked_at >= PROBE_EVERY:
            self._present, self._looked_at = self._probe(self.path), now
        if self._present is False:
            return f"{NO_WRITER}, and it has not changed for {idle:.0f} s"
        return None

    def due_in(self, idle: float) -> float:
        """Seconds until :meth:`gone` may answer differently for a quiet run."""
        if idle < self.idle_after:
            return self.idle_after - idle
        if self._looked_at is None:
            return 0.0
        return max(0.0, PROBE_EVERY - (self._clock() - self._looked_at))
