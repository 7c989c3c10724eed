"""Writing the library: index a file or a folder incrementally, mark what is gone or broken.

Why incremental by size and modification time: a watched folder is re-scanned at every
start and on every change, and re-reading thousands of unchanged runs would take minutes.
A file whose size or mtime changed is re-read whole through the ordinary loader (so every
format, foreign ones included, is indexed the way the app opens it). A file that no longer
loads is kept as ``unreadable`` with the loader's cause; one that is gone as ``missing``
("moved to …" when a run with the same size and mtime appeared elsewhere). Their steps
leave the search index; their row stays, so the Runs page shows them as such.

One :class:`Indexer` is the one writer of a process (the desktop's worker thread, or a CLI
command); each file is one short transaction, so readers are never held up.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom_core.errors import LoadError
from loom_core.formats.foreign import readers
from loom_core.library.address import as_runs_db
from loom_core.library.backend import RunsDb
from loom_core.library.db import norm
from loom_core.library.extract import RunFacts, StepText
from loom_core.library.outcomes import outcome_of, recheck
from loom_core.library.samples import file_run
from loom_core.library.scan import companions, run_files, superseded

FORGOTTEN = "forgotten"  # a runs.state: the user took it off the list
EVENTS = ("opened", "recording", "recorded", "forked", "healed")
Progress = Callable[[int, int, str], None]  # (done, total, current path)


@dataclass
class IndexReport:
    """What one pass did, path by path."""

    indexed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    causes: dict[str, str] = field(default_factory=dict)  # unreadable path -> why
    cancelled: bool = False


def signature(st: os.stat_result, parts: Sequence[str]) -> tuple[int, int]:
    """(size, mtime_ns) of a run's file folded with its parts': any of them changing
    changes it (a part that cannot be read counts as empty)."""
    size, mtime = st.st_size, st.st_mtime_ns
    for part in parts:
        try:
            pst = os.stat(part)
        except OSError:
            size -= 1  # gone or unreadable: still a change
            continue
        size, mtime = size + pst.st_size, max(mtime, pst.st_mtime_ns)
    return size, mtime


def run_values(path: str, f: RunFacts, ended: float) -> dict[str, Any]:
    """The runs table's columns for a run with facts ``f`` but its outcome (both backends
    store these; the outcome is decided as the run is written: :func:`outcome_of`)."""
    return {
        "format": f.format,
        "title": f.title,
        "models": "\n".join(f.models),
        "steps": f.steps,
        "tokens_in": f.tokens_in,
        "tokens_out": f.tokens_out,
        "cost": f.cost,
        "errors": f.errors,
        "facts": json.dumps(f.ending.as_json()),
        "proxy": bool(f.proxy),
        "started": f.started,
        "ended": ended,
        "time": f.started if f.started is not None else ended,
        "parent": norm(f.parent) if f.parent else None,
        "fork_seq": f.fork_seq,
        "healed_by": f.healed_by,
    }


class Indexer:
    """The library's writer (one per process; see the module docstring)."""

    def __init__(self, db: RunsDb | str | Path | None = None) -> None:
        self.db: RunsDb = as_runs_db(db)
        # (path, size) -> None to index here, "" when indexed elsewhere, else why not
        # (the desktop hands big runs to a child: :mod:`loom_core.library.offload`)
        self.offload: Callable[[str, int], str | None] | None = None

    def close(self) -> None:
        """Finish the writes in flight (their first error is raised) and close."""
        self.db.close()

    def flush(self) -> None:
        """Wait until every run handed to :meth:`store` is written (see :meth:`store`)."""
        self.db.flush()

    # -- one file --------------------------------------------------------------------
    def index_file(self, path: str | Path, force: bool = False, reread: bool = False) -> str:
        """Bring one path up to date: ``indexed``, ``unchanged``, ``unreadable`` or ``missing``.
        ``force``: read it again, a forgotten run too (the app opened it); ``reread``: read
        it again though its files' sizes and times did not change (a new part of it).
        Its row is written when this returns."""
        outcome = self._index_file(path, force, reread)
        self.flush()
        return outcome

    def _index_file(self, path: str | Path, force: bool, reread: bool) -> str:
        """:meth:`index_file`, its run's write possibly still in flight (see :meth:`store`)."""
        path = norm(path)
        try:
            st = os.stat(path)
        except OSError:
            self.db.mark_missing(path)
            return "missing"
        row = self.db.row(path)
        if superseded(path):  # listed while its trace was not written yet: the trace is it
            if row is not None and row[3] != FORGOTTEN:
                self.db.forget(path)
            return "unchanged"
        if row is not None and row[3] == FORGOTTEN and not force:
            return "unchanged"  # the user forgot it: it stays out until they open it again
        if (
            not (force or reread)
            and row is not None
            and (row[1], row[2]) == signature(st, self.db.parts(row[0]))
            and row[3] != "missing"
        ):
            return "unchanged"
        elsewhere = self.offload(path, st.st_size) if self.offload is not None else None
        if elsewhere is not None:
            if elsewhere:
                self.db.store_broken(path, st.st_size, st.st_mtime_ns, elsewhere)
                return "unreadable"
            return "indexed"
        try:
            facts, rows = file_run(path)
        except LoadError as err:
            self.db.store_broken(path, st.st_size, st.st_mtime_ns, err.cause)
            return "unreadable"
        except Exception as err:  # a reader's bug: this run is listed broken, the rest indexed
            cause = f"cannot be read ({type(err).__name__}: {err})"
            self.db.store_broken(path, st.st_size, st.st_mtime_ns, cause)
            return "unreadable"
        parts = companions(path, next((r for r in readers() if r.name == facts.format), None))
        size, mtime_ns = signature(st, parts)
        self.store(path, size, mtime_ns, facts, rows, parts)
        return "indexed"

    def owner(self, path: str | Path) -> str | None:
        """The run a companion file belongs to (None: it is no run's part)."""
        return self.db.owner(norm(path))

    def store(
        self,
        path: str,
        size: int,
        mtime_ns: int,
        f: RunFacts,
        rows: list[StepText],
        parts: Sequence[str] = (),
    ) -> None:
        """Write one run's row and its steps (one transaction). The benchmark calls it with
        generated runs; everything else goes through :meth:`index_file`. The team library
        may still be writing it when this returns, while the caller reads the next run
        (:mod:`.pg_later`): :meth:`flush`, :meth:`close` or a question about its path
        wait for it."""
        ended = mtime_ns / 1e9
        self.db.store(
            path,
            size,
            mtime_ns,
            run_values(path, f, ended),
            rows,
            parts,
            outcome_of(path, f, ended),
        )

    # -- many files ------------------------------------------------------------------
    def index_folder(
        self,
        folder: str | Path,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> IndexReport:
        """Index every run under ``folder``; runs the library knew there and that are gone
        are marked missing. Stops between files when ``cancelled()`` turns true."""
        root = norm(folder)
        if not os.path.isdir(root):
            raise LoadError(root, "not a folder")
        found = list(run_files(root))
        report = self.index_paths(found, progress, cancelled)
        if report.cancelled:
            return report
        report.missing += self.check_under(root, seen=set(found))
        return report

    def check_under(
        self, folder: str | Path, seen: set[str] | frozenset[str] = frozenset()
    ) -> list[str]:
        """Mark missing every run the library knows under ``folder`` (not in ``seen``) whose
        file is gone; the paths marked. A deleted folder leaves all its runs missing."""
        prefix = norm(folder).rstrip(os.sep) + os.sep
        known = [p for p in self.db.under(prefix) if p not in seen]
        for path in filter(superseded, known):  # a journal whose trace came later
            self.db.forget(path)
        gone = [p for p in known if not os.path.isfile(p)]
        for path in gone:
            self.db.mark_missing(path)
        return gone

    def index_paths(
        self,
        paths: list[str],
        progress: Progress | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> IndexReport:
        """Index each path in turn (see :meth:`index_file`), reporting progress."""
        report = IndexReport()
        for done, path in enumerate(paths):
            if cancelled():
                report.cancelled = True
                break
            if progress is not None:
                progress(done, len(paths), path)
            outcome = self._index_file(path, force=False, reread=False)
            getattr(report, outcome).append(norm(path))
            if outcome == "unreadable":
                report.causes[norm(path)] = self.cause(path)
        else:
            if progress is not None:
                progress(len(paths), len(paths), "")
        self.flush()  # the report's runs are written, as its reader expects
        return report

    def refresh(
        self, progress: Progress | None = None, cancelled: Callable[[], bool] = lambda: False
    ) -> IndexReport:
        """Re-check every run the library knows (moved, deleted, changed since last time)."""
        return self.index_paths(self.db.known_paths(), progress, cancelled)

    # -- what the app did --------------------------------------------------------------
    def note(self, path: str | Path, event: str, error: str = "") -> str:
        """Record that the app ``opened``/``recording``/``recorded``/``forked``/``healed``
        the run at ``path``, then index it. While ``recording`` its writer is the app's
        (it runs until its file says it finished, or ``recorded`` is noted); ``error``:
        the error the app saw end it (its agent crashed), which makes it failed."""
        if event not in EVENTS:
            raise ValueError(f"unknown library event {event!r}; events are {', '.join(EVENTS)}")
        path = norm(path)
        source = "recorded" if event == "recording" else event
        recording = event == "recording"
        forgotten = self.db.note(path, source, recording, error)
        # opening a forgotten run brings it back; what the app says changes its outcome
        force = forgotten or recording or event == "recorded" or bool(error)
        return self.index_file(path, force=force)

    def recheck(self) -> list[str]:
        """Decide again the outcome of every run that was running (its writer may be gone
        without its file changing); the paths whose outcome changed."""
        return recheck(self.db)

    def cause(self, path: str | Path) -> str:
        """Why the run at ``path`` is unreadable or missing ("" when it is fine)."""
        return self.db.cause(norm(path))

    def known(self, path: str | Path) -> bool:
        """Whether the library has a row for ``path``."""
        return self.db.known(norm(path))

    def forget(self, path: str | Path) -> bool:
        """Take a run off the lists and out of search (its file is left alone); False if
        the library did not have it. The row stays, marked forgotten, so the next scan of
        its folder does not bring it back; opening it in the app does."""
        return self.db.forget(norm(path))


def not_forgettable_here(path: str, host: str, author: str, source: str) -> str:
    """Why a run another machine listed is not forgotten from this one (the window's
    disabled Forget says it; ``runs forget`` refuses alike). Its row stands for that
    machine's file: whether the file is still kept there, and whether the run should stay
    listed for the team, its owner knows, not a teammate who only reads it."""
    how = "published" if source == "published" else "listed"
    return (
        f"{how} by {author or 'someone'} from {host}: only {host} can forget it "
        f"(loom-core runs forget {path} there)"
    )
