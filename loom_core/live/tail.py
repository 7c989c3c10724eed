"""Tail a journal while a run writes it: one owned thread, file-system events as hints.

Why this shape: the desktop's live tab and the ``watch`` CLI want every effect the
moment its line is flushed, without ever missing or duplicating one. The file is
the only truth, so all reading goes through one :class:`~loom_core.live.follow.JournalFollower`
(byte offset, complete lines, rewrite detection). File-system events only say
"something changed, read from the offset", so a burst of 10,000 writes wakes the
thread a handful of times and each wake-up reads everything there is (one update
per read). On Linux the thread waits on inotify itself (:mod:`loom_core.live.inotify`:
no other thread wakes per line); elsewhere ``watchdog`` events set one flag. Events may never arrive (network
file systems, some containers), so the thread also re-checks the file every
``poll_interval`` seconds; that tick also ages a trailing tool intent into a
crash ("stopped without finishing").

Ownership: :meth:`JournalTailer.start` starts the thread, which starts and, when it
ends, stops and joins its watchdog observer; :meth:`JournalTailer.stop` stops and
joins the thread. Callbacks run on that thread and must not touch GUI objects;
the desktop marshals them onto its own thread.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

from loom_core.formats.journal import JournalState
from loom_core.live.follow import JournalFollower, JournalUpdate
from loom_core.live.inotify import FileWatch, watch_file
from loom_core.live.live_status import DEFAULT_IDLE_AFTER

if TYPE_CHECKING:  # watchdog itself is imported only when a watch starts
    from watchdog.events import FileSystemEventHandler

__all__ = ["Follower", "JournalTailer", "JournalUpdate"]

log = logging.getLogger(__name__)

# Events that can mean new bytes or a new file; opened/closed-without-write are what
# our own reads cause, and reacting to them would make the tailer wake itself forever.
_HINT_EVENTS = frozenset(("modified", "created", "deleted", "moved", "closed"))


def _quiet_watchdog_threads(args: threading.ExceptHookArgs) -> None:
    """Log, don't print, a crash of a watchdog emitter thread.

    Emitters can die while their observer is being stopped (the inotify descriptor
    closes under a read); they are only hints, the tailer polls regardless, and a
    traceback on stderr would break "one line on stderr" for the CLI's errors.
    """
    if args.thread is not None and args.thread.name.startswith(("InotifyEmitter", "Emitter")):
        log.debug("watchdog thread %s ended: %s", args.thread.name, args.exc_value)
        return
    _previous_hook(args)


_previous_hook = threading.excepthook
threading.excepthook = _quiet_watchdog_threads
# watchdog warns (e.g. "queue_events() called when the thread is inactive") while an
# observer stops; with no handler configured Python prints that on stderr, where the
# watch CLI promises one line for an error. Its events are hints: keep it quiet.
logging.getLogger("watchdog").addHandler(logging.NullHandler())


def _norm(path: str | bytes) -> str:
    return os.path.normcase(os.path.abspath(os.fsdecode(path)))


class _Hint:
    """A watchdog event handler (duck-typed: watchdog only calls ``dispatch``)."""

    def __init__(self, targets: frozenset[str], hint: Callable[[], None]) -> None:
        self._targets = targets
        self._hint = hint

    def dispatch(self, event: Any) -> None:
        if event.event_type not in _HINT_EVENTS:
            return
        dest = getattr(event, "dest_path", "")
        if _norm(event.src_path) in self._targets or (dest and _norm(dest) in self._targets):
            self._hint()


class Follower(Protocol):
    """What the tailer's thread drives: a :class:`JournalFollower`, or a
    :class:`~loom_core.live.reread.RereadFollower` for a foreign format."""

    path: str
    exists: bool

    def read(self, final: bool = False) -> JournalUpdate | None: ...
    def due_in(self) -> float | None: ...
    def note_writer_running(self) -> None: ...
    def note_writer_stopped(self, why: str, failed: bool = False) -> None: ...


class JournalTailer:
    """Follows one journal and calls ``on_update(JournalUpdate)`` from its own thread.

    ``follower``: what reads the file (default: a :class:`JournalFollower`); a foreign
    format passes a :class:`~loom_core.live.reread.RereadFollower` and is tailed the same way.

    Use as ``with JournalTailer(path, on_update) as tailer: ...`` or call
    :meth:`start` / :meth:`stop`; without a thread, call :meth:`poll_now`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        on_update: Callable[[JournalUpdate], None],
        poll_interval: float = 0.5,
        use_watchdog: bool = True,
        idle_after: float = DEFAULT_IDLE_AFTER,
        follower: Follower | None = None,
    ) -> None:
        self._follower: Follower = follower or JournalFollower(path, idle_after)
        self._on_update = on_update
        self.poll_interval = poll_interval
        self._use_watchdog = use_watchdog
        self._lock = threading.RLock()  # one read at a time, updates delivered in order
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: Any = None
        self._watch: FileWatch | None = None  # Linux: the thread waits on inotify itself

    @property
    def path(self) -> str:
        return self._follower.path

    @property
    def follower(self) -> Follower:
        """What reads the file (its settings, e.g. ``idle_after``, may be tuned before start)."""
        return self._follower

    @property
    def state(self) -> JournalState:
        """The accumulated state (a new object after a rewrite); mutated by the tailer's thread.
        Journals only: a foreign follower has a document instead."""
        follower = self._follower
        if not isinstance(follower, JournalFollower):
            raise TypeError("a foreign-format tailer has no journal state")
        return follower.state

    @property
    def exists(self) -> bool:
        """Whether the file existed at the last read."""
        return self._follower.exists

    @property
    def watching_events(self) -> bool:
        """Whether file-system events are watched (else the tailer only polls)."""
        return self._observer is not None or self._watch is not None

    def __enter__(self) -> JournalTailer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the thread (it reads at once). A stopped tailer cannot be restarted."""
        if self._stopping.is_set():
            raise RuntimeError("a stopped JournalTailer cannot be restarted")
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, daemon=True, name=f"loom-tail {os.path.basename(self.path)}"
            )
            self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop the thread and its observer and join them; idempotent, safe from a callback."""
        self._stopping.set()
        self._poke()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def hint(self) -> None:
        """Tell the thread the file may have changed (what a file-system event does)."""
        self._poke()

    def writer_running(self) -> None:
        """The process writing the journal is the owner's and runs (the app's proxy): the
        run is still being written whatever its last line says. Any thread."""
        self._follower.note_writer_running()
        self._poke()

    def writer_stopped(self, why: str, failed: bool = False) -> None:
        """The process writing the journal is gone (its owner knows): once the last
        bytes are read, an unfinished run says "stopped without finishing" -- or
        "failed" when ``failed`` (an error ended it: the agent crashed). Any thread."""
        self._follower.note_writer_stopped(why, failed)
        self._poke()

    def poll_now(self, final: bool = False) -> JournalUpdate | None:
        """Read synchronously on the caller's thread; the update (also passed to on_update)."""
        with self._lock:
            update = self._follower.read(final)
            if update is not None:
                self._on_update(update)
            return update

    # -- the thread ---------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._step()
            while not self._stopping.is_set():
                self._wait(self._timeout())  # an event, the polling tick or a status change
                if self._stopping.is_set():
                    break
                self._wake.clear()  # before reading: an event during the read wakes us again
                self._step()
        finally:
            self._stop_observer()

    def _poke(self) -> None:
        """Wake the thread (any thread)."""
        self._wake.set()
        watch = self._watch
        if watch is not None:
            watch.wake()

    def _wait(self, timeout: float) -> None:
        watch = self._watch
        if watch is None or self._wake.is_set():
            self._wake.wait(timeout)
        else:  # a _poke() from now on writes to the watch's pipe: poll returns
            watch.wait(timeout)

    def _timeout(self) -> float:
        with self._lock:
            due = self._follower.due_in()
        return self.poll_interval if due is None else min(self.poll_interval, due + 0.01)

    def _step(self) -> None:
        """One wake-up: make sure events are watched, read, report; never let a callback kill us."""
        self._ensure_observer()
        with self._lock:
            try:
                update = self._follower.read()
                if update is not None:
                    self._on_update(update)
            except Exception:  # a consumer bug must not stop the following
                log.exception("journal tailer for %s: update failed", self.path)

    def _ensure_observer(self) -> None:
        """Watch the parent directory once it exists; on any failure, keep polling."""
        if not self._use_watchdog or self._observer is not None or self._watch is not None:
            return
        parent = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(parent):
            return
        self._watch = watch_file(self.path)
        if self._watch is not None:
            if self._wake.is_set():  # poked before the watch existed: go round once more
                self._watch.wake()
            return
        targets = frozenset({_norm(self.path), _norm(os.path.realpath(self.path))})
        try:
            from watchdog.observers import Observer

            observer = Observer()
            # duck-typed: watchdog only calls the handler's dispatch()
            handler = cast("FileSystemEventHandler", _Hint(targets, self._wake.set))
            observer.schedule(handler, parent, recursive=False)
            observer.start()
        except Exception as err:  # no inotify watches left, unsupported file system...
            log.warning("journal tailer for %s: polling only (%s)", self.path, err)
            self._use_watchdog = False
            return
        self._observer = observer

    def _stop_observer(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join()
