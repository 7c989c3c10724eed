"""Changes in the watched folders, as paths for the indexer to look at again.

Why only hints: a file-system event says "this path may have changed", nothing more (and
may never arrive on a network file system). The indexer decides what changed by size and
mtime, so a burst of events for one trace being rewritten costs one re-index once it
settles. A file event names the file; a folder created, moved or deleted names the folder
(the indexer re-scans it or marks its runs missing). Besides folders, single files are
watched (:meth:`FolderWatcher.watch_file`: a run the app opened, recorded or follows,
wherever it is, and one that does not exist yet): their folder is watched, not
recursively, and only their own events are passed on. A file a live tab follows is kept
quiet (:meth:`FolderWatcher.quiet_file`): a folder watched only for such files is not
watched at all, so a line appended to a followed run wakes no thread here (the tab reads
it already; the indexer reads the run once it settles or the tab closes).

Ownership: :meth:`FolderWatcher.start` starts watchdog's observer thread and
:meth:`FolderWatcher.stop` stops and joins it; the owner (the indexer) calls both.
``on_path`` runs on the observer's thread and must only queue work.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any, cast

from loom_core.library.scan import SIDECAR

log = logging.getLogger(__name__)
logging.getLogger("watchdog").addHandler(logging.NullHandler())  # events are only hints
_EVENTS = frozenset(("created", "modified", "deleted", "moved", "closed"))


class _Handler:
    """A watchdog event handler (duck-typed: watchdog only calls ``dispatch``)."""

    def __init__(
        self, on_path: Callable[[str, bool], None], keep: Callable[[str], bool] | None = None
    ) -> None:
        self.on_path = on_path
        self.keep = keep  # None: every path; else only those it keeps (single files)

    def dispatch(self, event: Any) -> None:
        if event.event_type not in _EVENTS:
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw) if raw else ""
            if not path or os.path.basename(path).startswith("."):
                continue
            if self.keep is not None and (event.is_directory or not self.keep(path)):
                continue
            if event.is_directory or not path.endswith(SIDECAR):
                self.on_path(path, bool(event.is_directory))


class FolderWatcher:
    """Watches folders recursively; ``on_path(path, is_folder)`` for each change."""

    def __init__(self, on_path: Callable[[str, bool], None]) -> None:
        self._handler = _Handler(on_path)
        self._files: set[str] = set()  # single files watched (see watch_file)
        self._file_handler = _Handler(
            on_path, keep=lambda path: path in self._files and path not in self._quiet
        )
        self._lock = threading.Lock()
        self._observer: Any = None
        self._watches: dict[str, Any] = {}
        self._file_folders: dict[str, Any] = {}  # a single file's folder -> its watch
        self._quiet: set[str] = set()  # single files a live tab follows (see quiet_file)

    @property
    def folders(self) -> list[str]:
        return list(self._watches)

    def start(self) -> bool:
        """Start the observer thread; False (polling only, by rescans) when watchdog cannot."""
        with self._lock:
            if self._observer is not None:
                return True
            try:
                from watchdog.observers import Observer

                observer = Observer()
                observer.daemon = True
                observer.start()
            except Exception as err:  # no inotify left, unsupported file system …
                log.warning("run library: not watching folders (%s)", err)
                return False
            self._observer = observer
            return True

    def watch(self, folder: str) -> bool:
        """Add a folder (recursive); False if it cannot be watched (missing, no watches left)."""
        with self._lock:
            if self._observer is None or folder in self._watches or not os.path.isdir(folder):
                return folder in self._watches
            try:
                from watchdog.events import FileSystemEventHandler

                handler = cast(FileSystemEventHandler, self._handler)
                self._watches[folder] = self._observer.schedule(handler, folder, recursive=True)
            except Exception as err:
                log.warning("run library: not watching %s (%s)", folder, err)
                return False
            return True

    def watch_file(self, path: str) -> bool:
        """Pass on the changes of one file (it need not exist yet, its folder must); False
        if it cannot be watched (or it is quiet: then its folder may not be watched)."""
        with self._lock:
            self._files.add(path)
            return self._sync(os.path.dirname(path))

    def quiet_file(self, path: str, quiet: bool) -> None:
        """Keep ``path``'s events from waking anything (``quiet``: a live tab follows it),
        or pass them on again. Its folder is watched only while a file of it is not quiet."""
        with self._lock:
            if quiet:
                self._quiet.add(path)
            else:
                self._quiet.discard(path)
            self._sync(os.path.dirname(path))

    def _sync(self, folder: str) -> bool:
        """Watch ``folder`` for its single files exactly while one of them is not quiet
        (called with the lock held); whether it is watched."""
        wanted = any(os.path.dirname(f) == folder and f not in self._quiet for f in self._files)
        watch = self._file_folders.get(folder)
        if self._observer is None or wanted == (watch is not None):
            return watch is not None
        if watch is not None:  # only quiet files left in it
            del self._file_folders[folder]
            self._unschedule(watch, folder)
            return False
        if not os.path.isdir(folder):
            return False
        try:
            from watchdog.events import FileSystemEventHandler

            handler = cast(FileSystemEventHandler, self._file_handler)
            self._file_folders[folder] = self._observer.schedule(handler, folder)
        except Exception as err:
            log.warning("run library: not watching %s (%s)", folder, err)
            return False
        return True

    def _unschedule(self, watch: Any, folder: str) -> None:
        if self._observer is not None:
            try:
                self._observer.unschedule(watch)
            except Exception as err:  # already gone with its folder
                log.debug("run library: unwatch %s: %s", folder, err)

    def unwatch(self, folder: str) -> None:
        with self._lock:
            watch = self._watches.pop(folder, None)
            if watch is not None:
                self._unschedule(watch, folder)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop and join the observer thread (idempotent)."""
        with self._lock:
            observer, self._observer = self._observer, None
            self._watches.clear()
            self._file_folders.clear()
        if observer is not None:
            observer.stop()
            observer.join(timeout)
