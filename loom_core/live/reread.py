"""Follow a foreign-format file (Claude Code, OTLP …) as it grows: re-read it when it changed.

A line-based format (one whose reader has ``lines``: Claude Code) is read by offset, its
appended lines only (:mod:`loom_core.live.appended`); what follows is why the others are
re-read whole, and what bounds the cost of both.

Why whole re-reads, not byte offsets like :mod:`loom_core.live.follow`: a foreign reader
turns a whole file into a run (a streamed Claude Code turn spans several lines that
merge into one model call; an OTLP span tree is only a tree once its parents arrive),
so the only reading that is always right is the reader's own, on the whole file. The
cost is bounded instead: a re-read happens only when the file's size, time or identity
changed, and never sooner than twice the previous read took after it (at least
:data:`MIN_GAP` s), so a file written many times a second is read a few times a second
and a big one is read less often rather than saturating a core.

:class:`RereadFollower` has the interface :class:`~loom_core.live.tail.JournalTailer`
drives (``read``, ``tick``, ``due_in``, ``note_writer_stopped``), so a foreign file is
tailed by the same thread, watchdog hints and polling as a journal; each read that
found something new yields a :class:`RereadUpdate` carrying the whole new document.

"Live" for a foreign file is decided as for a journal (:mod:`loom_core.live.writers`):
the file changed within ``idle_after`` seconds, or a process on this machine has it
open for writing; otherwise it is :data:`IDLE` (still followed: a Claude Code session
can be resumed at any time, and its writer appends without keeping the file open).

A re-read that fails after a good one (the file was replaced by garbage, cut short …)
keeps the last good document and says why in ``problems``; only a first read that fails
is an ``error`` (the tab fails as an open of that file would).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.foreign import ForeignReader
from loom_core.live.appended import AppendedReader
from loom_core.live.follow import JournalUpdate
from loom_core.live.live_status import (
    DEFAULT_IDLE_AFTER,
    NO_FILE_YET,
    NO_STEP_YET,
    RUNNING,
    WAITING,
)
from loom_core.live.writers import WriterWatch, writer_present

__all__ = ["IDLE", "MIN_GAP", "RereadFollower", "RereadUpdate", "is_live_file"]

IDLE = "idle"  # not written to lately and no writer seen; still followed
MIN_GAP = 0.2  # seconds: the least time between the end of one re-read and the next
MAX_GAP = 5.0  # …and the most, however slow the previous read was


@dataclass(frozen=True, eq=False)
class RereadUpdate(JournalUpdate):
    """A :class:`JournalUpdate` from a whole re-read: ``document`` is the run as the file
    holds it now (None: nothing new was read, only the status or a problem changed).
    ``new_effects`` are the effects past the previous read's count, for counting only:
    a consumer replaces what it shows with ``document``."""

    document: Document | None = None


def _signature(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _companion_signature(paths: list[str]) -> tuple[tuple[str, int, int], ...]:
    """Size and time of each companion file (a vanished one reads as -1)."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
            out.append((path, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((path, -1, -1))
    return tuple(out)


def is_live_file(
    path: str | os.PathLike[str],
    idle_after: float = DEFAULT_IDLE_AFTER,
    probe: Callable[[str], bool | None] = writer_present,
) -> bool:
    """Whether a file looks like it is still being written: modified within
    ``idle_after`` seconds, or held open for writing by a process on this machine."""
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return False
    return time.time() - mtime < idle_after or probe(os.fspath(path)) is True


class RereadFollower:
    """Re-reads a file with a foreign reader whenever it changed; see the module docstring."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        reader: ForeignReader,
        idle_after: float = DEFAULT_IDLE_AFTER,
        clock: Callable[[], float] = time.monotonic,
        probe: Callable[[str], bool | None] = writer_present,
    ) -> None:
        self.path = os.fspath(path)
        self.reader = reader
        self.idle_after = idle_after
        self._clock = clock
        self.writer = WriterWatch(self.path, idle_after, clock, probe)
        self.document: Document | None = None
        self.exists = False
        self._seen: tuple[object, ...] | None = None  # the file (and companions) as last read
        self._size = 0  # the file's size at the last read
        self._next_read = 0.0  # clock time before which a change waits (debounce)
        self._pending = False  # a change seen but not read yet
        self._last_change = clock()
        self._status: str | None = None
        self._detail = ""
        self._problem = ""  # the last re-read's failure, reported once
        self._appended = AppendedReader(self.path, reader) if reader.lines is not None else None

    # -- the follower interface the tailer drives ---------------------------------------

    def read(self, final: bool = False) -> RereadUpdate | None:
        """Re-read when the file changed (and the debounce allows, unless ``final``)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return self._gone()
        except OSError as err:
            return self._failed(os.strerror(err.errno or 0) or str(err))
        if not stat.S_ISREG(st.st_mode):
            return self._failed("not a regular file")
        self.exists = True
        sig: tuple[object, ...] = _signature(st)
        if self.reader.companions is not None:  # e.g. sub-agent files: part of the run
            try:
                sig += _companion_signature(self.reader.companions(self.path))
            except OSError:
                pass
        if sig == self._seen:
            return self._report(None, ())
        if not final and self._clock() < self._next_read:
            self._pending = True
            return None  # due_in() wakes the tailer when the gap is over
        return self._reread(sig)

    def tick(self) -> RereadUpdate | None:
        """Re-evaluate the status without reading (a quiet file turns idle)."""
        return self._report(None, ())

    def due_in(self) -> float | None:
        """Seconds until a debounced change should be read or the status may change."""
        now = self._clock()
        if self._pending:
            return max(0.0, self._next_read - now)
        if self._status == RUNNING:
            return self.writer.due_in(now - self._last_change)
        return None

    def note_writer_running(self) -> None:
        """The owner of the writer says it writes (safe from any thread)."""
        self.writer.note_writing()

    def note_writer_stopped(self, why: str, failed: bool = False) -> None:
        """The owner of the writer says it stopped (safe from any thread)."""
        self.writer.note_stopped(why, failed)

    # -- reading ---------------------------------------------------------------------------

    def _reread(self, sig: tuple[object, ...]) -> RereadUpdate | None:
        started = self._clock()
        self._pending, self._seen = False, sig
        size = sig[2]
        self._size = size if isinstance(size, int) else 0
        self.writer.at_read(self._size, False)
        self.writer.changed()
        self._last_change = started
        if self.document is None:  # first read: quiet since the file's last write, not now
            mtime = sig[3]  # (a session opened an hour after its last prompt is not running)
            if isinstance(mtime, int):
                self._last_change -= max(0.0, time.time() - mtime / 1e9)
        try:
            doc = self._read_document()
        except LoadError as err:
            return self._reread_failed(err.cause, started)
        except OSError as err:
            return self._reread_failed(os.strerror(err.errno or 0) or str(err), started)
        finally:
            took = self._clock() - started
            self._next_read = self._clock() + min(MAX_GAP, max(MIN_GAP, 2 * took))
        before = len(self.document.effects) if self.document is not None else 0
        self.document, self._problem = doc, ""
        return self._report(doc, tuple(doc.effects[before:]), changed=True)

    def _read_document(self) -> Document:
        if self._appended is not None:  # a line-based format: the appended lines only
            return self._appended.read()
        with open(self.path, "rb") as fh:
            data = fh.read()
        return self.reader.load(data, self.path)

    def _reread_failed(self, cause: str, started: float) -> RereadUpdate | None:
        if self.document is None:
            return self._failed(cause)
        self._problem = f"The file could not be read again ({cause}); the last good read is shown."
        return self._report(None, (), changed=True)

    def _gone(self) -> RereadUpdate | None:
        changed = self.exists
        self.exists, self._seen = False, None
        if changed:
            self._problem = "The file is gone; what was read before is shown."
        return self._report(None, (), changed=changed)

    def _failed(self, cause: str) -> RereadUpdate | None:
        changed = cause != self._problem
        self._problem = cause
        if self.document is not None:
            return self._report(None, (), changed=changed)
        return self._report(None, (), changed=changed, error=cause)

    # -- reporting -------------------------------------------------------------------------

    def _current_status(self) -> tuple[str, str]:
        if self.document is None:
            return WAITING, NO_STEP_YET if self.exists else NO_FILE_YET
        idle = self._clock() - self._last_change
        if idle < self.idle_after:
            return RUNNING, ""
        why = self.writer.gone(idle, True)
        if why is None and self.writer.present:
            return RUNNING, ""
        return IDLE, why or f"the file has not changed for {idle:.0f} s"

    def _report(
        self,
        document: Document | None,
        new: tuple[object, ...],
        changed: bool = False,
        error: str | None = None,
    ) -> RereadUpdate | None:
        status, detail = self._current_status()
        problems = (self._problem,) if changed and self._problem and error is None else ()
        if not changed and status == self._status and detail == self._detail:
            return None
        self._status, self._detail = status, detail
        doc = self.document
        return RereadUpdate(
            rewritten=False,
            header=None,
            new_effects=list(new),
            new_entries=[],
            unfinished=doc.unfinished if doc is not None else (),
            torn=doc.torn if doc is not None else False,
            exists=self.exists,
            offset=self._size if self._seen else 0,
            status=status,
            total_effects=len(doc.effects) if doc is not None else 0,
            error=error,
            problems=problems,
            detail=detail,
            document=document,
        )
