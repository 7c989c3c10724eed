"""Follow a journal file as it grows, by byte offset: the synchronous core of the tailer.

Why separate from the thread in :mod:`loom_core.live.tail`: every rule about the file
(complete lines only, rewrites, deletion, a file that does not exist yet) lives in
one object whose :meth:`JournalFollower.read` can be called and tested without any
timing. It is not thread-safe; :class:`loom_core.live.tail.JournalTailer` serialises it.

Recognising a rewrite: loom-harness truncates and rewrites the journal in place at
the start of every live run (same inode; the new content may already be longer
than what we had read). So besides "the inode changed", "the file vanished" and
"the file is shorter than our offset", the first and the last few KiB we read are
compared with what is on disk now. A rewrite that reproduces exactly the bytes
already read cannot be told from an append, and needs no telling: continuing from
the offset then yields exactly the state a full reload would.

A UTF-8 byte-order mark at the start of the file is skipped, as the full load skips it
(:mod:`loom_core.formats.reader`): the window and the command line read the same lines.

An unreadable complete line (not JSON, not UTF-8, nested too deeply, a header no
document can be built from) is reported once with its line number and skipped; the
lines after it are read as usual. (A full load stops at it, as loom-harness does; a
live view would otherwise freeze on one bad line while the run goes on.) Fields of
the wrong type are read as their defaults and reported as ``problems``.

A run whose writer is gone says :data:`~loom_core.live.live_status.STOPPED`: when the
owner says so (:meth:`JournalFollower.note_writer_stopped`: the app's proxy or demo
stopped), or when the file has been idle ``idle_after`` seconds and no process on
this machine holds it open for writing (:mod:`loom_core.live.writers`; where that cannot
be known, nothing is claimed and the run stays "running").
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import msgspec

from loom_core.formats.document import Unfinished
from loom_core.formats.gc_pause import gc_paused
from loom_core.formats.journal import JournalState
from loom_core.formats.reader import without_bom
from loom_core.formats.tolerant import surrogates_escaped
from loom_core.live.live_status import (
    DEFAULT_IDLE_AFTER,
    NO_FILE_YET,
    NO_STEP_YET,
    REWRITTEN,
    RUNNING,
    STOPPED,
    WAITING,
    live_outcome,
)
from loom_core.live.prefix import ReadPrefix, read_at
from loom_core.live.writers import WriterWatch, writer_present

_JOURNAL_TYPES = frozenset((b'"header"', b'"intent"', b'"effect"'))
_probe = msgspec.json.Decoder(dict[str, msgspec.Raw])


@dataclass(frozen=True, eq=False)
class JournalUpdate:
    """What one read of the journal found; the consumer applies these in order.

    ``rewritten``: the state was reset (drop everything shown so far; ``new_effects``
    then holds the whole new content). ``new_effects`` / ``new_entries``: the typed
    effect structs and their raw JSON lines appended by this read. ``header`` and
    ``unfinished`` are the current values, not deltas. ``torn``: the file ends in a
    partial line (the writer may still complete it). ``offset``: bytes of
    complete lines consumed. ``total_effects``: effects in the state after this read,
    so a consumer can check it is in step. ``error``: why the file cannot be read as
    a journal (not a journal, a directory, permission denied), else None.
    ``unreadable``: (line number, cause) of each complete line this read skipped.
    ``problems``: fields of the wrong type in the lines this read (read as defaults).
    ``detail``: how the status is known, when that is not obvious (why "stopped").
    """

    rewritten: bool
    header: dict[str, Any] | None
    new_effects: list[Any]
    new_entries: list[msgspec.Raw]
    unfinished: tuple[Unfinished, ...]
    torn: bool
    exists: bool
    offset: int
    status: str
    total_effects: int = 0
    error: str | None = None
    unreadable: tuple[tuple[int, str], ...] = ()
    problems: tuple[str, ...] = ()
    detail: str = ""


def _first_line_problem(block: bytes) -> str | None:
    """Why the first non-blank line is not a journal line, or None if it is one."""
    for line in block.split(b"\n"):
        if line.strip():
            try:
                kind = _probe.decode(line).get("type")
            except (msgspec.DecodeError, msgspec.ValidationError):
                try:  # a lone surrogate escape: the line reader reads it (shown escaped)
                    kind = _probe.decode(surrogates_escaped(line) or b"").get("type")
                except (msgspec.DecodeError, msgspec.ValidationError):
                    return "not a loom journal (the first line is not a JSON object)"
            except RecursionError:
                return None  # an object, too deep to look into: the line reader names it
            if kind is None or bytes(kind) not in _JOURNAL_TYPES:
                return "not a loom journal (the first line is not a header, intent or effect)"
            return None
    return None


class JournalFollower:
    """Reads what was appended to a journal since the last call; see the module docstring."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        idle_after: float = DEFAULT_IDLE_AFTER,
        clock: Callable[[], float] = time.monotonic,
        probe: Callable[[str], bool | None] = writer_present,
    ) -> None:
        self.path = os.fspath(path)
        self.idle_after = idle_after
        self._clock = clock
        self.writer = WriterWatch(self.path, idle_after, clock, probe)
        self.state = JournalState()
        self.exists = False
        self.error: str | None = None  # what the content says: not a journal, a bad field type
        self._access_error: str | None = None  # what opening says: a directory, no permission
        self._prefix = ReadPrefix()  # what was read of the file: its offset, its rewrites
        self._partial = b""
        self._vanished = False
        self._checked_first = False
        self._status: str | None = None
        self._torn = False
        self._detail = ""
        self._last_change = clock()
        self._warned = 0  # the state's problems (fields of the wrong type) reported so far
        self._unreadable: list[tuple[int, str]] = []  # found by the read in progress

    @property
    def offset(self) -> int:
        """Bytes of complete lines consumed."""
        return self._prefix.pos - len(self._partial)

    def read(self, final: bool = False) -> JournalUpdate | None:
        """Read from the offset; the update, or None when nothing anyone could see changed.

        ``final=True`` is for the last read of a caller that stops waiting: a trailing
        line without a newline is then taken as it is, as a full load does.
        """
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return self._missing()
        except IsADirectoryError:
            return self._failed("is a directory, not a file")
        except PermissionError:
            return self._failed("permission denied")
        except OSError as err:
            return self._failed(os.strerror(err.errno or 0) or str(err))
        with f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return self._failed(
                    "is a directory, not a file"
                    if stat.S_ISDIR(st.st_mode)
                    else "not a regular file"
                )
            cleared, self._access_error = self._access_error is not None, None
            appeared = not self.exists
            rewritten = self._was_rewritten(f, st)
            if rewritten:
                self._reset()
            self.exists, self._vanished = True, False
            self.writer.at_read(st.st_size, rewritten)
            start = self._prefix.pos == 0
            data = read_at(f, self._prefix.pos, -1)
            self._prefix.took(data, st)
        # a file found already written has been quiet since its last write, not since now
        # (a journal opened an hour after its writer died is not running for 10 s more)
        age = max(0.0, time.time() - st.st_mtime) if appeared and not rewritten else 0.0
        return self._consume(data, start, rewritten, appeared or cleared, final, age)

    def note_writer_running(self) -> None:
        """The owner of the writer says it writes (safe from any thread)."""
        self.writer.note_writing()

    def note_writer_stopped(self, why: str, failed: bool = False) -> None:
        """The owner of the writer says it stopped (safe from any thread), ``failed``: with
        an error. Taken at the next read; later growth or a rewrite means a writer is back,
        and it is dropped."""
        self.writer.note_stopped(why, failed)

    def tick(self) -> JournalUpdate | None:
        """Re-evaluate the status without reading (a trailing tool intent ages into a crash)."""
        return self._report(False, len(self.state.effects), changed=False)

    def due_in(self) -> float | None:
        """Seconds until the status can change with no new bytes, or None (never).

        "rewritten" lasts one update; a trailing tool intent turns into a crash after
        ``idle_after`` seconds. The tailer's thread wakes up then, not a tick later.
        """
        if self._status == REWRITTEN:
            return 0.0
        if self._status != RUNNING:
            return None
        return self.writer.due_in(self._clock() - self._last_change)  # ages a tool intent too

    # -- recognising a new file -------------------------------------------------

    def _was_rewritten(self, f: IO[bytes], st: os.stat_result) -> bool:
        if self._prefix.pos and self._vanished:
            return True
        return self._prefix.rewritten(f, st)

    def _reset(self) -> None:
        self.state = JournalState()
        self._prefix, self._partial = ReadPrefix(), b""
        self._checked_first = False
        self.error = None
        self._warned = 0

    # -- consuming bytes ---------------------------------------------------------

    def _consume(
        self,
        data: bytes,
        start: bool,
        rewritten: bool,
        appeared: bool,
        final: bool,
        age: float = 0.0,
    ) -> JournalUpdate | None:
        """Take ``data``, read from the offset (``start``: from the file's start)."""
        before = len(self.state.effects)
        chunk = self._partial + data if self._partial else without_bom(data) if start else data
        cut = len(chunk) if final else chunk.rfind(b"\n") + 1
        self._partial = chunk[cut:]
        if cut:
            self._feed(chunk[:cut])
        changed = rewritten or appeared or cut > 0
        if changed or data:
            self._last_change = self._clock() - age
            self.writer.changed()
        return self._report(rewritten, before, changed)

    def _feed(self, block: bytes) -> None:
        """Feed complete lines; one that cannot be read is noted (number, cause) and skipped."""
        if self.error:
            return
        if not self._checked_first and block.strip():
            self._checked_first = True
            self.error = _first_line_problem(block)
            if self.error:
                return
        lines = block.split(b"\n")
        if block.endswith(b"\n"):
            lines.pop()  # what follows the last newline is not a line
        state = self.state
        with gc_paused():
            for line in lines:
                cause = state.read_line(line)
                if cause is not None:
                    self._unreadable.append((state.line_no, cause))

    # -- reporting ---------------------------------------------------------------

    def _missing(self) -> JournalUpdate | None:
        changed = self.exists
        if changed:
            self.exists, self._vanished = False, True
            self._last_change = self._clock()
        return self._report(False, len(self.state.effects), changed)

    def _failed(self, cause: str) -> JournalUpdate | None:
        changed = cause != self._access_error
        self._access_error = cause
        return self._report(False, len(self.state.effects), changed)

    def _current_status(self, rewritten: bool) -> tuple[str, str]:
        """The status, and why (how a gone writer is known, a crash's tool, what a waiting
        run waits for; else "")."""
        status, why = self._decided_status(rewritten)
        if status == WAITING and not why:  # say what it waits for
            return status, NO_STEP_YET if self.exists else NO_FILE_YET
        return status, why

    def _decided_status(self, rewritten: bool) -> tuple[str, str]:
        state = self.state if self.exists else None
        idle = self._clock() - self._last_change
        error = self.writer.error
        if self.writer.owned and not rewritten:  # its owner says it still writes
            return live_outcome(state, idle, self.idle_after, writer=True)
        status, why = live_outcome(state, idle, self.idle_after, rewritten=rewritten, error=error)
        if rewritten or error or status not in (RUNNING, WAITING, STOPPED):
            return status, why
        # what is known of the writer decides: a quiet run whose writer is gone has stopped;
        # a tool that is merely slow, in a process still holding the journal, is running
        gone = self.writer.gone(idle, quiet_run=status != WAITING)
        if gone is not None:
            return live_outcome(state, idle, self.idle_after, writer=False, writer_why=gone)
        if self.writer.present:
            return live_outcome(state, idle, self.idle_after, writer=True)
        return status, why

    def _report(self, rewritten: bool, before: int, changed: bool) -> JournalUpdate | None:
        status, detail = self._current_status(rewritten)
        torn = self.exists and bool(self._partial.strip())
        unreadable, self._unreadable = tuple(self._unreadable), []
        problems = tuple(self.state.problems[self._warned :])
        self._warned = len(self.state.problems)
        if (
            not changed
            and not unreadable
            and not problems
            and status == self._status
            and torn == self._torn
            and detail == self._detail
        ):
            return None
        self._status, self._torn, self._detail = status, torn, detail
        return JournalUpdate(
            rewritten=rewritten,
            header=self.state.header,
            new_effects=self.state.effects[before:],
            new_entries=self.state.entries[before:],
            unfinished=self.state.unfinished(),
            torn=torn,
            exists=self.exists,
            offset=self.offset,
            status=status,
            total_effects=len(self.state.effects),
            error=self._access_error or self.error,
            unreadable=unreadable,
            problems=problems,
            detail=detail,
        )
