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
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from loom_core.errors import LoadError
from loom_core.formats.foreign import readers
from loom_core.library.db import STEP_SPAN, connect, norm, step_rowid, transaction
from loom_core.library.extract import RunFacts, StepText
from loom_core.library.outcomes import decided_outcome, recheck
from loom_core.library.samples import file_run
from loom_core.library.scan import companions, run_files

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


INT64 = 2**63 - 1


def sql_int(value: int | None) -> int | None:
    """An integer SQLite can hold: a file's counts and seqs have no limit (a hand-edited
    ``1e400``-sized token count or seq read as a Python int), a column has 64 bits."""
    return None if value is None else max(-INT64 - 1, min(INT64, value))


class Indexer:
    """The library's writer (one per process; see the module docstring)."""

    def __init__(self, conn: sqlite3.Connection | None = None) -> None:
        self.conn = conn if conn is not None else connect()
        # (path, size) -> None to index here, "" when indexed elsewhere, else why not
        # (the desktop hands big runs to a child: :mod:`loom_core.library.offload`)
        self.offload: Callable[[str, int], str | None] | None = None

    def close(self) -> None:
        self.conn.close()

    # -- one file --------------------------------------------------------------------
    def index_file(self, path: str | Path, force: bool = False, reread: bool = False) -> str:
        """Bring one path up to date: ``indexed``, ``unchanged``, ``unreadable`` or ``missing``.
        ``force``: read it again, a forgotten run too (the app opened it); ``reread``: read
        it again though its files' sizes and times did not change (a new part of it)."""
        path = norm(path)
        try:
            st = os.stat(path)
        except OSError:
            self._mark_missing(path)
            return "missing"
        row = self.conn.execute(
            "SELECT id, size, mtime_ns, state FROM runs WHERE path = ?", (path,)
        ).fetchone()
        if row is not None and row[3] == FORGOTTEN and not force:
            return "unchanged"  # the user forgot it: it stays out until they open it again
        if (
            not (force or reread)
            and row is not None
            and (row[1], row[2]) == signature(st, self._parts(int(row[0])))
            and row[3] != "missing"
        ):
            return "unchanged"
        elsewhere = self.offload(path, st.st_size) if self.offload is not None else None
        if elsewhere is not None:
            if elsewhere:
                self._store_broken(path, st, elsewhere)
                return "unreadable"
            return "indexed"
        try:
            facts, rows = file_run(path)
        except LoadError as err:
            self._store_broken(path, st, err.cause)
            return "unreadable"
        except Exception as err:  # a reader's bug: this run is listed broken, the rest indexed
            self._store_broken(path, st, f"cannot be read ({type(err).__name__}: {err})")
            return "unreadable"
        parts = companions(path, next((r for r in readers() if r.name == facts.format), None))
        size, mtime_ns = signature(st, parts)
        self.store(path, size, mtime_ns, facts, rows, parts)
        return "indexed"

    def _parts(self, run: int) -> list[str]:
        return [p for (p,) in self.conn.execute("SELECT path FROM parts WHERE run = ?", (run,))]

    def owner(self, path: str | Path) -> str | None:
        """The run a companion file belongs to (None: it is no run's part)."""
        row = self.conn.execute(
            "SELECT r.path FROM parts p JOIN runs r ON r.id = p.run WHERE p.path = ?",
            (norm(path),),
        ).fetchone()
        return str(row[0]) if row else None

    def _upsert(self, path: str) -> int:
        self.conn.execute("INSERT OR IGNORE INTO runs (path) VALUES (?)", (path,))
        row = self.conn.execute("SELECT id FROM runs WHERE path = ?", (path,)).fetchone()
        return int(row[0])

    def _clear_steps(self, run: int) -> None:
        self.conn.execute(
            "DELETE FROM step_fts WHERE rowid >= ? AND rowid < ?",
            (step_rowid(run, 0), step_rowid(run + 1, 0)),
        )

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
        generated runs; everything else goes through :meth:`index_file`."""
        ended = mtime_ns / 1e9
        decided = decided_outcome(self.conn, path, f, ended)  # before: it may look at /proc
        with transaction(self.conn):
            run = self._upsert(path)
            self._clear_steps(run)
            self.conn.execute(
                "UPDATE runs SET size=?, mtime_ns=?, format=?, title=?, models=?, steps=?, "
                "tokens_in=?, tokens_out=?, cost=?, errors=?, outcome=?, why=?, facts=?, "
                "proxy=?, started=?, ended=?, time=?, parent=?, fork_seq=?, healed_by=?, "
                "state='ok', cause='', indexed=? WHERE id=?",
                (
                    size,
                    mtime_ns,
                    f.format,
                    f.title,
                    "\n".join(f.models),
                    f.steps,
                    sql_int(f.tokens_in),
                    sql_int(f.tokens_out),
                    f.cost,
                    f.errors,
                    decided.status,
                    decided.why,
                    json.dumps(f.ending.as_json()),
                    int(f.proxy),
                    f.started,
                    ended,
                    f.started if f.started is not None else ended,
                    norm(f.parent) if f.parent else None,
                    sql_int(f.fork_seq),
                    f.healed_by,
                    time.time(),
                    run,
                ),
            )
            self.conn.execute("DELETE FROM parts WHERE run = ?", (run,))
            self.conn.executemany(
                "INSERT OR REPLACE INTO parts VALUES (?, ?)", ((p, run) for p in parts)
            )
            self.conn.executemany(
                "INSERT INTO step_fts (rowid, body, tool, agent, tags, seq, sample) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    (step_rowid(run, i), r.body, r.tool, r.agent, r.tags, sql_int(r.seq), r.sample)
                    for i, r in enumerate(rows[: STEP_SPAN - 1])
                ),
            )

    def _store_broken(self, path: str, st: os.stat_result, cause: str) -> None:
        with transaction(self.conn):
            run = self._upsert(path)
            self._clear_steps(run)
            self.conn.execute(
                "UPDATE runs SET size=?, mtime_ns=?, state='unreadable', cause=?, ended=?, "
                "time=COALESCE(started, ?), indexed=? WHERE id=?",
                (st.st_size, st.st_mtime_ns, cause, st.st_mtime, st.st_mtime, time.time(), run),
            )

    def _mark_missing(self, path: str) -> None:
        row = self.conn.execute(
            "SELECT id, size, mtime_ns, live, state FROM runs WHERE path = ?", (path,)
        ).fetchone()
        if row is None or row[3]:
            return  # unknown, or being recorded: its file may not be written yet
        if row[4] == FORGOTTEN:  # forgotten, then deleted: nothing left to remember
            with transaction(self.conn):
                self.conn.execute("DELETE FROM runs WHERE id = ?", (row[0],))
            return
        twin = self.conn.execute(
            "SELECT path FROM runs WHERE size = ? AND mtime_ns = ? AND state = 'ok' AND path != ?",
            (row[1], row[2], path),
        ).fetchone()
        cause = f"moved to {twin[0]}" if twin else "the file is gone"
        if row[1] is None:  # never read: the app opened it before it was written
            cause = "not written yet"
        with transaction(self.conn):
            self._clear_steps(int(row[0]))
            self.conn.execute(
                "UPDATE runs SET state='missing', cause=? WHERE id=?",
                (cause, row[0]),
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
        known = self.conn.execute(
            "SELECT path FROM runs WHERE substr(path, 1, ?) = ? AND state != 'missing'",
            (len(prefix), prefix),
        ).fetchall()
        gone = [p for (p,) in known if p not in seen and not os.path.isfile(p)]
        for path in gone:
            self._mark_missing(path)
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
            outcome = self.index_file(path)
            getattr(report, outcome).append(norm(path))
            if outcome == "unreadable":
                report.causes[norm(path)] = self.cause(path)
        else:
            if progress is not None:
                progress(len(paths), len(paths), "")
        return report

    def refresh(
        self, progress: Progress | None = None, cancelled: Callable[[], bool] = lambda: False
    ) -> IndexReport:
        """Re-check every run the library knows (moved, deleted, changed since last time)."""
        known = [p for (p,) in self.conn.execute("SELECT path FROM runs ORDER BY time DESC")]
        return self.index_paths(known, progress, cancelled)

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
        with transaction(self.conn):
            run = self._upsert(path)
            forgotten = self.conn.execute(
                "SELECT state = ? FROM runs WHERE id = ?", (FORGOTTEN, run)
            ).fetchone()[0]
            self.conn.execute(
                "UPDATE runs SET source=?, noted=?, live=?, "
                "outcome=CASE WHEN ? AND size IS NULL THEN 'running' ELSE outcome END, "
                "error=CASE WHEN ? OR ? != '' THEN ? ELSE error END WHERE id=?",
                (source, time.time(), int(recording), recording, recording, error, error, run),
            )
        # opening a forgotten run brings it back; what the app says changes its outcome
        force = bool(forgotten) or recording or event == "recorded" or bool(error)
        return self.index_file(path, force=force)

    def recheck(self) -> list[str]:
        """Decide again the outcome of every run that was running (its writer may be gone
        without its file changing); the paths whose outcome changed."""
        return recheck(self.conn)

    def cause(self, path: str | Path) -> str:
        """Why the run at ``path`` is unreadable or missing ("" when it is fine)."""
        row = self.conn.execute("SELECT cause FROM runs WHERE path = ?", (norm(path),)).fetchone()
        return str(row[0]) if row else ""

    def known(self, path: str | Path) -> bool:
        """Whether the library has a row for ``path``."""
        row = self.conn.execute("SELECT 1 FROM runs WHERE path = ?", (norm(path),)).fetchone()
        return row is not None

    def forget(self, path: str | Path) -> bool:
        """Take a run off the lists and out of search (its file is left alone); False if
        the library did not have it. The row stays, marked forgotten, so the next scan of
        its folder does not bring it back; opening it in the app does."""
        path = norm(path)
        row = self.conn.execute("SELECT id, state FROM runs WHERE path = ?", (path,)).fetchone()
        if row is None or row[1] == FORGOTTEN:
            return False
        with transaction(self.conn):
            self._clear_steps(int(row[0]))
            self.conn.execute("UPDATE runs SET state = ? WHERE id = ?", (FORGOTTEN, row[0]))
        return True
