"""The window's run library: one indexer, the runs and hits models, queries off the GUI thread.

Why one controller for the start page and the dock: both show the same collection (one Qt
model per core collection), and one query at a time keeps a newer keystroke from being
overtaken by an older answer (:class:`~loom_desktop.infra.workers.Task` drops superseded
results). The indexer's callbacks arrive on its thread and are relayed by a queued signal.
Ownership: :meth:`start` starts the indexer, :meth:`shutdown` stops and joins it;
:meth:`switch` (Settings ▸ Library…) stops it and starts one on the other library.

A team library lists runs whose files are on other machines: :meth:`fetch` brings the
published copy of one into the local cache on a pool thread (a download can take long).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from loom_core.errors import LoadError
from loom_core.formats.progressive import Cancelled
from loom_core.library.address import default_address, is_url
from loom_core.library.arriving import HeadWatch
from loom_core.library.backend import this_host
from loom_core.library.index import Indexer, not_forgettable_here
from loom_core.library.publish import STORE, local_file
from loom_core.library.rows import Hit, RunRow
from loom_core.library.search import Library
from loom_core.library.store import Arrived, store_io
from loom_core.library.worker import IndexProgress, LibraryIndexer
from loom_desktop.features.library.models import COLUMNS, HitsModel, RunsModel
from loom_desktop.infra.child import BACKGROUND, module_command
from loom_desktop.infra.thread_runner import failure_cause
from loom_desktop.infra.workers import Task, TaskContext

PAGE = 500  # runs listed at once; the list says when there are more
TEAM_POLL_MS = 30_000  # a team's library is listed again this often (others publish to it)


@dataclass(frozen=True)
class Answer:
    """What one query found (made on a pool thread)."""

    runs: list[RunRow]
    hits: list[Hit]
    total: int
    store: str  # the library's run store ("": it names none)


def run_query(
    query: str, sort: str, descending: bool, db: str | None, forget: str | None = None
) -> Answer:
    """List and search the library (a pool thread: its own connections); ``forget`` first
    drops that run (SQLite's busy timeout waits for the indexer's writes)."""
    if forget is not None:
        indexer = Indexer(db)
        try:
            indexer.forget(forget)
        finally:
            indexer.close()
    with Library(db) as lib:
        runs = lib.runs(query, sort, descending, limit=PAGE)
        hits = lib.search(query) if query.strip() else []
        return Answer(runs, hits, lib.count(), lib.db.setting(STORE) or "")


def index_command(db: str, path: str) -> list[str]:
    """The child process that indexes a big run (its memory and CPU stay out of the app's;
    at a lower priority, :mod:`loom_core.cli.background`)."""
    program, args = module_command(BACKGROUND, "runs", "--library", db, "index", path)
    return [program, *args]


def arriving(ctx: TaskContext) -> Arrived:
    """A fetch's ``arrived``: its progress, and a big run's head once its first bytes are
    here (``ctx.partial((cache file once whole, head))``); a superseded fetch stops."""

    watch = HeadWatch(lambda target, head: ctx.partial((target, head)))

    def arrived(partial: Path, done: int, total: int) -> None:
        if ctx.cancelled():
            raise Cancelled  # a newer fetch: this one's partial file is removed
        ctx.progress(done, total)
        watch(partial, done, total)

    return arrived


class _Relay(QObject):
    progress = Signal(object)
    changed = Signal(object)


class LibraryController(QObject):
    """See the module docstring."""

    answered = Signal()  # the models hold a new answer
    progressed = Signal(str)  # what the indexer is doing, for the page's status line
    failed = Signal(str)  # a query with a problem (named), or the database unusable

    fetched = Signal(str, object)  # (the run's path as listed, the local file to open)
    fetch_failed = Signal(str, str)  # (the run's path as listed, why it cannot be had)
    # (the run's path as listed, its cache file once whole, its first screen: a Loaded
    # not complete) while a big run arrives; then ``fetched``
    fetch_head = Signal(str, object, object)
    fetch_progress = Signal(int, int)  # bytes of the run's main file here, of all

    def __init__(
        self, parent: QObject | None = None, folders: Iterable[str | Path] | None = None,
        db: str | None = None,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self.db = db  # the library's address (None: LOOM_LIBRARY_URL, else the local file)
        self.folders = list(folders) if folders is not None else None
        self.runs = RunsModel(self)
        self.hits = HitsModel(self)
        self.query, self.sort, self.descending = "", "time", True
        self.total = 0
        self.store = ""  # the library's run store, as the last answer said
        self._relay = _Relay(self)
        self._relay.progress.connect(self._on_progress)
        self._refresh_soon = QTimer(self, singleShot=True, interval=150)
        self._relay.changed.connect(lambda _paths: self._refresh_soon.start())
        self.indexer = self._new_indexer()
        self._task = Task(self)
        self._task.finished.connect(self._on_answer)
        self._task.failed.connect(self._on_failed)
        self._refresh_soon.timeout.connect(self.refresh)
        # what teammates index and publish changes no file here: a team's list is asked again
        self.team_poll = QTimer(self, interval=TEAM_POLL_MS)
        self.team_poll.timeout.connect(self.refresh)
        self._started = False
        self._fetching = ""
        self._fetch = Task(self)
        self._fetch.finished.connect(self._on_fetched)
        self._fetch.failed.connect(self._on_fetch_failed)
        self._fetch.partial.connect(lambda got: self.fetch_head.emit(self._fetching, *got))
        self._fetch.progressed.connect(self.fetch_progress)

    def _new_indexer(self) -> LibraryIndexer:
        return LibraryIndexer(
            self.folders, self.db, self._relay.progress.emit, self._relay.changed.emit,
            spawn=index_command,
        )  # fmt: skip

    # -- owner -------------------------------------------------------------------------
    def start(self) -> None:
        """Start indexing the watched folders and list what the library holds."""
        if not self._started:
            self._started = True
            self.indexer.start()
            if self.team_address() is not None:
                self.team_poll.start()
        self.refresh()

    def shutdown(self) -> None:
        self._refresh_soon.stop()
        self.team_poll.stop()
        self._task.cancel()
        self._fetch.cancel()
        if self._started:
            self.indexer.stop()

    def switch(self, address: str | None) -> None:
        """Use the library at ``address`` from now on (None: the default one): the old
        indexer is stopped and joined first, so no write goes to the old library after."""
        was_started = self._started
        self.shutdown()
        self._started = False
        self.db = address
        self.store = ""  # the other library's, once it answers
        self.runs.set_runs([])
        self.hits.set_hits([])
        self.indexer = self._new_indexer()
        if was_started:
            self.start()

    # -- requests ----------------------------------------------------------------------
    def set_query(self, text: str) -> None:
        self.query = text
        self._refresh_soon.start()

    def sort_by(self, column: int, descending: bool) -> None:
        key = COLUMNS[column][1]
        if key:
            self.sort, self.descending = key, descending
            self.refresh()

    def note(self, path: str, event: str, error: str = "") -> None:
        """The app opened / recorded / forked / healed ``path``: list it (and re-index it);
        ``error``: an error the app saw end it."""
        self.indexer.note(path, event, error)

    def follow(self, path: str, on: bool) -> None:
        """A live tab follows ``path`` (``on``: the library leaves it to the tab) or no
        longer (its run settled, or the tab closed: the library reads it again)."""
        if on:
            self.indexer.follow(path)
        else:
            self.indexer.unfollow(path)

    def forget(self, path: str) -> None:
        """Drop ``path`` from the library (the file stays); then list again."""
        self.refresh(forget=path)

    def team_address(self) -> str | None:
        """The team library's URL, or None when this is the computer's own library."""
        address = self.db if self.db is not None else default_address()
        return address if is_url(address) else None

    def publish_blocker(self) -> str:
        """Why a recording cannot be published when it stops ("" when it can): publishing
        goes to a team's library, and needs the run store that library names."""
        if self.team_address() is None:
            return "publishing needs a team library (Settings ▸ Library…)"
        if not self.store:
            return "the team library names no run store (Settings ▸ Library…)"
        return ""

    def locate(self, path: str) -> tuple[str, str | None]:
        """(host, published URL) of the listed run or hit at ``path`` ("", None: unknown)."""
        items: list[RunRow | Hit] = [*self.runs.runs, *self.hits.hits]
        found = next((item for item in items if item.path == path), None)
        return (found.host, found.url) if found is not None else ("", None)

    def elsewhere(self, path: str) -> str:
        """Why the listed run at ``path`` cannot be forgotten here ("" when it can): it is
        another machine's (see :func:`loom_core.library.index.not_forgettable_here`)."""
        found = next((r for r in self.runs.runs if r.path == path), None)
        if found is None or found.host in ("", this_host()):
            return ""
        return not_forgettable_here(path, found.host, found.author, found.source)

    def needs_fetch(self, path: str) -> bool:
        """Whether the run listed at ``path`` is opened from the run store: its file is on
        another machine, or gone from here but published."""
        host, url = self.locate(path)
        elsewhere = host not in ("", this_host())
        return elsewhere or (url is not None and not Path(path).is_file())

    def fetch(self, path: str) -> None:
        """Bring the published copy of the run listed at ``path`` here (``fetched`` or
        ``fetch_failed`` follows; a newer fetch supersedes an older one)."""
        host, url = self.locate(path)
        address = self.db
        self._fetching = path

        def work(ctx: TaskContext) -> Path:
            from loom_core.library.address import open_runs

            db = open_runs(address)
            try:
                with store_io():  # no fsspec thread outlives it: the app forks to checksum
                    return local_file(db, path, host, url, arriving(ctx))
            finally:
                db.close()

        self._fetch.start(work)

    def _on_fetched(self, local: object) -> None:
        self.fetched.emit(self._fetching, local)

    def _on_fetch_failed(self, exc: object) -> None:
        assert isinstance(exc, BaseException)
        self.fetch_failed.emit(self._fetching, failure_cause(exc))

    def refresh(self, forget: str | None = None) -> None:
        query, sort, desc, db = self.query, self.sort, self.descending, self.db
        self._task.start(lambda _ctx: run_query(query, sort, desc, db, forget))

    # -- answers -----------------------------------------------------------------------
    def _on_answer(self, answer: object) -> None:
        assert isinstance(answer, Answer)
        self.total = answer.total
        self.store = answer.store
        if answer.runs != self.runs.runs or answer.hits != self.hits.hits:
            self.runs.set_runs(answer.runs)  # (unchanged: the user's selection stays)
            self.hits.set_hits(answer.hits)
        self.answered.emit()

    def _on_failed(self, exc: object) -> None:
        cause = (
            f"{exc.path}: {exc.cause}"
            if isinstance(exc, LoadError)
            else f"{type(exc).__name__}: {exc}"
        )
        self.failed.emit(cause)

    def _on_progress(self, progress: object) -> None:
        assert isinstance(progress, IndexProgress)
        if progress.phase == "idle":
            self.progressed.emit("")
        else:
            name = Path(progress.path).name if progress.path else Path(progress.folder).name
            self.progressed.emit(f"{progress.phase} {progress.done:,}/{progress.total:,} {name}")
