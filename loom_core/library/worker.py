"""Keeping the library up to date in the background: the desktop's one library writer.

Why one thread with a queue: SQLite takes one writer at a time, and the desktop must
never wait for indexing (a first scan of a big folder takes minutes). Every request --
scan a folder, a file changed, "the app opened/recorded/forked/healed this path" -- is
queued and returns at once; the thread runs them in order, reports progress, and stops
between files when cancelled. Changed paths (files and folders) are settled first
(:attr:`settle` seconds without a new event, or :data:`MAX_DEFER` after the first one),
so a trace the proxy rewrites every two seconds is re-indexed once it pauses, not on
every write, a folder copied in is scanned once its files are written, and a live run
written faster than it settles is still read as it grows. A run the app noted (opened,
recording …) is watched wherever it is, even before its file exists. A run a live tab
follows (:meth:`LibraryIndexer.follow`) is the exception: the tab reads each appended
line already, so the library does not watch it (its watcher's threads and this one woke
on every line, more CPU than the tab's own tailer, issue 24) and reads it once the tab
says the run settled or closed (:meth:`LibraryIndexer.unfollow`). Every few seconds it also decides again the outcome
of the runs that were running (:mod:`loom_core.library.outcomes`): a writer can die
without its file changing.

Callbacks (``on_progress``, ``on_changed``) run on the worker thread: the desktop
forwards them to its GUI thread with a queued signal and must not touch widgets in them.

Ownership: :meth:`LibraryIndexer.start` starts the thread and the folder watcher;
:meth:`LibraryIndexer.stop` cancels the current work and joins both.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom_core.formats.foreign import run_part_of
from loom_core.library.address import default_address
from loom_core.library.db import norm
from loom_core.library.index import EVENTS, Indexer
from loom_core.library.offload import OFFLOAD_BYTES, ChildIndexing, Spawn
from loom_core.library.outcomes import RECHECK_EVERY
from loom_core.library.scan import default_folders, is_run_file
from loom_core.library.watch import FolderWatcher

log = logging.getLogger(__name__)


MAX_DEFER = 2.0  # seconds a path that keeps changing waits, at most, to be read again


@dataclass(frozen=True)
class IndexProgress:
    """Where the worker is: ``phase`` is ``scanning`` (a folder), ``indexing`` (changed
    files) or ``idle``; ``done`` of ``total`` files, ``path`` the one being read."""

    phase: str
    done: int = 0
    total: int = 0
    path: str = ""
    folder: str = ""


@dataclass
class _Task:
    kind: str  # watch | unwatch | scan | refresh | note | path | follow | forget | recheck
    path: str = ""
    event: str = ""
    generation: int = 0
    error: str = ""  # a note's: the error the app saw end the run


class LibraryIndexer:
    """Indexes watched folders in a background thread (see the module docstring)."""

    def __init__(
        self,
        folders: Iterable[str | Path] | None = None,
        db_path: str | Path | None = None,
        on_progress: Callable[[IndexProgress], None] | None = None,
        on_changed: Callable[[list[str]], None] | None = None,
        watch: bool = True,
        settle: float = 0.5,
        spawn: Spawn | None = None,
        offload_bytes: int = OFFLOAD_BYTES,
    ) -> None:
        self._folders = [norm(f) for f in (default_folders() if folders is None else folders)]
        self._db_path = db_path
        self._on_progress = on_progress
        self._on_changed = on_changed
        self.settle = settle
        self._watcher = FolderWatcher(self._changed_path) if watch else None
        self._cond = threading.Condition()
        self._tasks: deque[_Task] = deque()
        # changed path -> monotonic times of its first and its last event since it was read
        self._dirty: dict[str, tuple[float, float]] = {}
        self._folders_dirty: set[str] = set()  # those of them that are folders
        self._followed: Counter[str] = Counter()  # path -> live tabs following it
        self._generation = 0
        self._recheck_at = 0.0  # monotonic time of the next look at running runs
        self._busy = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.progress = IndexProgress("idle")
        # big runs are indexed by a child process when the owner says how to start one
        self.offload = (
            ChildIndexing(spawn, str(db_path or default_address()), offload_bytes)
            if spawn is not None
            else None
        )

    # -- owner -----------------------------------------------------------------------
    def start(self) -> None:
        """Start the thread: watch and scan every folder, then follow changes until
        :meth:`stop`. The folder watcher starts on that thread too: its import and its
        own thread's start took the caller's (the window's GUI thread) 8-11 ms of CPU, and
        up to 0.2 s on a loaded machine waiting for the new thread to run."""
        if self._thread is not None:
            return
        for folder in self._folders:
            self._put(_Task("watch", folder))
            self._put(_Task("scan", folder))
        self._thread = threading.Thread(target=self._run, name="library-indexer", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel what is running, stop the watcher and join the thread (idempotent). The
        runs live tabs still follow are read first: nothing watches them, so nothing else
        would index what they became (the app quits while they are written)."""
        with self._cond:
            if not self._stopping:
                self._tasks = deque(_Task("follow", path) for path in self._followed)
                self._followed.clear()
            self._stopping = True
            self._generation += 1
            self._cond.notify_all()
        if self.offload is not None:
            self.offload.stop()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("run library: the indexer did not stop within %.0f s", timeout)
        if self._watcher is not None:  # after the thread, which starts it
            self._watcher.stop(timeout)

    # -- requests (never block) ------------------------------------------------------
    @property
    def folders(self) -> list[str]:
        return list(self._folders)

    def add_folder(self, folder: str | Path) -> None:
        """Watch ``folder`` too, and index what it holds."""
        path = norm(folder)
        if path not in self._folders:
            self._folders.append(path)
        self._put(_Task("watch", path))  # on the worker: watching a big tree takes a while
        self._put(_Task("scan", path))

    def remove_folder(self, folder: str | Path) -> None:
        """Stop watching ``folder`` (its runs stay listed until forgotten)."""
        path = norm(folder)
        if path in self._folders:
            self._folders.remove(path)
        self._put(_Task("unwatch", path))

    def note(self, path: str | Path, event: str, error: str = "") -> None:
        """The app ``opened``/``recording``/``recorded``/``forked``/``healed`` ``path``;
        ``error``: the error it saw end the run (its agent crashed)."""
        if event not in EVENTS:
            raise ValueError(f"unknown library event {event!r}; events are {', '.join(EVENTS)}")
        self._put(_Task("note", norm(path), event, error=error))

    def follow(self, path: str | Path) -> None:
        """A live tab follows ``path``: its changes are not watched (nor read) until every
        tab following it has called :meth:`unfollow`."""
        key = norm(path)
        with self._cond:
            self._followed[key] += 1
            self._dirty.pop(key, None)
        self._put(_Task("follow", key))

    def unfollow(self, path: str | Path) -> None:
        """A live tab's run settled (it ended) or the tab closed: watch ``path`` again and
        read what was written while it was followed."""
        key = norm(path)
        with self._cond:
            if self._followed[key] > 1:
                self._followed[key] -= 1
            else:
                del self._followed[key]
        self._put(_Task("follow", key))

    def forget(self, path: str | Path) -> None:
        """Drop ``path`` from the library (the file is left alone)."""
        self._put(_Task("forget", norm(path)))

    def refresh(self) -> None:
        """Re-check every known run, then re-scan every folder."""
        self._put(_Task("refresh"))
        for folder in self._folders:
            self._put(_Task("scan", folder))

    def cancel(self) -> None:
        """Stop the scan in progress and drop queued scans (notes and changes still run)."""
        with self._cond:
            self._generation += 1
            kept = [t for t in self._tasks if t.kind not in ("scan", "refresh")]
            self._tasks.clear()
            self._tasks.extend(kept)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until nothing is queued, settling or running (tests and the CLI use it)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._tasks or self._dirty or self._busy:
                left = deadline - time.monotonic()
                if left <= 0 or self._stopping:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    # -- internals -------------------------------------------------------------------
    def _put(self, task: _Task) -> None:
        with self._cond:
            if self._stopping:
                return
            task.generation = self._generation
            self._tasks.append(task)
            self._cond.notify_all()

    def _changed_path(self, path: str, is_folder: bool) -> None:
        with self._cond:
            now, key = time.monotonic(), norm(path)
            if key in self._followed:  # a live tab reads it (in a watched folder)
                return
            self._dirty[key] = (self._dirty.get(key, (now, now))[0], now)
            if is_folder:
                self._folders_dirty.add(norm(path))
            self._cond.notify_all()

    def _next(self) -> _Task | None:
        """The next task: queued ones first, then a changed path that has settled."""
        with self._cond:
            while True:
                if self._tasks:  # stopping: only the followed runs are left (see stop)
                    self._busy = True
                    return self._tasks.popleft()
                if self._stopping:
                    return None
                now = time.monotonic()
                ready = [p for p, t in self._dirty.items() if self._due(t, now) <= 0]
                if ready:
                    path = ready[0]
                    del self._dirty[path]
                    self._busy = True
                    kind = "scan" if path in self._folders_dirty else "path"
                    self._folders_dirty.discard(path)
                    return _Task(kind, path, generation=self._generation)
                if now >= self._recheck_at:  # runs that were running: is their writer gone?
                    self._recheck_at = now + RECHECK_EVERY
                    self._busy = True
                    return _Task("recheck", generation=self._generation)
                waits = [self._due(t, now) for t in self._dirty.values()]
                wait = min([*waits, self._recheck_at - now])
                self._busy = False
                self._cond.notify_all()
                self._cond.wait(wait)

    def _due(self, times: tuple[float, float], now: float) -> float:
        """Seconds until a changed path is read: once it settled, or at the latest
        :data:`MAX_DEFER` after its first change (a file written more often than it can
        settle -- a live run's journal, an OTLP trace -- is still read while it grows)."""
        first, last = times
        return min(self.settle - (now - last), max(MAX_DEFER, self.settle) - (now - first))

    def _run(self) -> None:
        indexer = None
        try:
            with self._cond:
                watch = self._watcher is not None and not self._stopping
            if watch and self._watcher is not None:
                self._watcher.start()
            indexer = Indexer(self._db_path)
            indexer.offload = self.offload
            while (task := self._next()) is not None:
                try:
                    changed = self._do(indexer, task)
                except Exception:  # one bad file or a full disk must not end the worker
                    log.exception("run library: %s %s failed", task.kind, task.path)
                    changed = []
                if task.kind != "recheck":  # a look every few seconds is not progress
                    self._report(IndexProgress("idle"))
                if changed:
                    self._call(self._on_changed, changed)
        except Exception:
            log.exception("run library: the indexer stopped")
        finally:
            if indexer is not None:
                indexer.close()
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _do(self, indexer: Indexer, task: _Task) -> list[str]:
        """Run one task; the paths whose rows changed."""
        cancelled: Callable[[], bool] = lambda: task.generation != self._generation  # noqa: E731
        if task.kind == "recheck":
            return indexer.recheck()
        if task.kind == "note":
            indexer.note(task.path, task.event, task.error)
            if self._watcher is not None:  # the app has it: re-index it when it changes
                self._watcher.watch_file(task.path)
            return [task.path]  # its source changed even when its file did not
        if task.kind == "follow":
            with self._cond:
                followed = task.path in self._followed
            if self._watcher is not None:
                self._watcher.quiet_file(task.path, followed)
            if followed:
                return []
            task.kind = "path"  # no tab follows it now: read what it became
        if task.kind in ("watch", "unwatch"):
            if self._watcher is not None:
                if task.kind == "watch":
                    self._watcher.watch(task.path)
                else:
                    self._watcher.unwatch(task.path)
            return []
        if task.kind == "forget":
            return [task.path] if indexer.forget(task.path) else []
        if task.kind == "path":
            # a sub-agent's file: its session is the run (known as its part, or by place:
            # a new part, which the session's stored signature cannot know yet)
            known_part = indexer.owner(task.path)
            new_part = None if known_part else run_part_of(task.path)
            path = known_part or new_part or task.path
            if not (indexer.known(path) or is_run_file(path)):
                return []
            outcome = indexer.index_file(path, reread=new_part is not None)
            return [path] if outcome != "unchanged" else []
        progress = self._progress_of(task)
        if task.kind == "refresh":
            report = indexer.refresh(progress, cancelled)
        elif os.path.isdir(task.path):
            report = indexer.index_folder(task.path, progress, cancelled)
        else:
            return indexer.check_under(task.path)
        return report.indexed + report.unreadable + report.missing

    def _progress_of(self, task: _Task) -> Callable[[int, int, str], None]:
        phase = "scanning" if task.kind == "scan" else "indexing"

        def report(done: int, total: int, path: str) -> None:
            self._report(IndexProgress(phase, done, total, path, task.path))

        return report

    def _report(self, progress: IndexProgress) -> None:
        self.progress = progress
        self._call(self._on_progress, progress)

    @staticmethod
    def _call(callback: Callable[[Any], None] | None, value: object) -> None:
        if callback is None:
            return
        try:
            callback(value)
        except Exception:  # a consumer's bug must not stop indexing
            log.exception("run library: a callback failed")
