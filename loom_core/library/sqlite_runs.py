"""The user's own library on SQLite (FTS5): :class:`~loom_core.library.backend.RunsDb`.

Why newest first by rowid: a step's rowid carries its run (see
:func:`loom_core.library.db.step_rowid`), so walking the index backwards yields the newest
runs' hits first without sorting every match; a search for a common word across ten
million steps stops after the first page. One connection per object, in autocommit mode:
each write is one short ``BEGIN IMMEDIATE`` transaction, and a reader never waits for the
writer (WAL). Every run is on this machine, so ``host`` is the same in every row.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from loom_core.library.backend import Decide, RunningRow
from loom_core.library.db import STEP_SPAN, connect, step_rowid, transaction
from loom_core.library.extract import StepText
from loom_core.library.query import SearchQuery
from loom_core.library.rows import RUN_COLUMNS, Hit, RunRow, split_marks

FORGOTTEN = "forgotten"  # a runs.state: the user took it off the list
SNIPPET_WORDS = 16
EXAMINED = 200_000  # steps a tool glob or agent name is checked on, at most, per query
EXACT_STEPS = 20_000  # page() collects the runs of at most this many matching steps at once
SORTS = {
    "time": "time",
    "steps": "steps",
    "tokens": "tokens_in + tokens_out",
    "cost": "cost",
    "format": "format",
    "outcome": "outcome",
    "path": "path",
    "model": "models",
}
INT64 = 2**63 - 1
_RUNNING = (
    "SELECT id, path, format, facts, proxy, live, error, mtime_ns FROM runs "
    "WHERE outcome = 'running' AND state = 'ok'"
)


def sql_int(value: int | None) -> int | None:
    """An integer SQLite can hold: a file's counts and seqs have no limit (a hand-edited
    ``1e400``-sized token count or seq read as a Python int), a column has 64 bits."""
    return None if value is None else max(-INT64 - 1, min(INT64, value))


def run_conditions(q: SearchQuery) -> tuple[list[str], list[Any]]:
    """Run keys as conditions on ``r`` (the runs table)."""
    where: list[str] = ["r.state = 'ok'"]
    args: list[Any] = []
    for column, values in (("r.models", q.models), ("r.author", q.authors), ("r.host", q.hosts)):
        if values:
            where.append("(" + " OR ".join(f"lower({column}) LIKE ?" for _ in values) + ")")
            args += [f"%{v}%" for v in values]
    if q.sources:
        where.append(f"r.source IN ({','.join('?' * len(q.sources))})")
        args += q.sources
    if q.after is not None:
        where.append("r.time >= ?")
        args.append(q.after)
    if q.before is not None:
        where.append("r.time < ?")
        args.append(q.before)
    return where, args


class SqliteRunsDb:
    """The SQLite library at ``address`` (see the module docstring)."""

    def __init__(self, address: str, host: str, author: str) -> None:
        self.address, self.host, self.author = address, host, author
        self.conn: sqlite3.Connection = connect(address)

    def close(self) -> None:
        self.conn.close()

    def flush(self) -> None:
        """Nothing in flight: each write is committed when it returns (one writer)."""

    # -- writing -----------------------------------------------------------------------
    def row(self, path: str) -> tuple[int, int | None, int | None, str] | None:
        row = self.conn.execute(
            "SELECT id, size, mtime_ns, state FROM runs WHERE path = ?", (path,)
        ).fetchone()
        return (int(row[0]), row[1], row[2], str(row[3])) if row else None

    def parts(self, run: int) -> list[str]:
        return [p for (p,) in self.conn.execute("SELECT path FROM parts WHERE run = ?", (run,))]

    def owner(self, part: str) -> str | None:
        row = self.conn.execute(
            "SELECT r.path FROM parts p JOIN runs r ON r.id = p.run WHERE p.path = ?", (part,)
        ).fetchone()
        return str(row[0]) if row else None

    def _noted(self, path: str) -> tuple[bool, str]:
        """(live, error): what the app said of the run at ``path``."""
        row = self.conn.execute("SELECT live, error FROM runs WHERE path = ?", (path,)).fetchone()
        return (bool(row[0]), str(row[1])) if row else (False, "")

    def _upsert(self, path: str) -> int:
        self.conn.execute(
            "INSERT OR IGNORE INTO runs (path, host, author) VALUES (?, ?, ?)",
            (path, self.host, self.author),
        )
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
        values: dict[str, Any],
        rows: Sequence[StepText],
        parts: Sequence[str],
        outcome: Decide,
    ) -> None:
        status, why = outcome(*self._noted(path))
        columns = {**values, "size": size, "mtime_ns": mtime_ns, "state": "ok", "cause": ""}
        columns.update(outcome=status, why=why)
        columns["indexed"] = time.time()
        for key in ("tokens_in", "tokens_out", "fork_seq"):
            columns[key] = sql_int(columns.get(key))
        with transaction(self.conn):
            run = self._upsert(path)
            self._clear_steps(run)
            sets = ", ".join(f"{k}=?" for k in columns)
            self.conn.execute(f"UPDATE runs SET {sets} WHERE id=?", (*columns.values(), run))
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

    def store_broken(self, path: str, size: int, mtime_ns: int, cause: str) -> None:
        mtime = mtime_ns / 1e9
        with transaction(self.conn):
            run = self._upsert(path)
            self._clear_steps(run)
            self.conn.execute(
                "UPDATE runs SET size=?, mtime_ns=?, state='unreadable', cause=?, ended=?, "
                "time=COALESCE(started, ?), indexed=? WHERE id=?",
                (size, mtime_ns, cause, mtime, mtime, time.time(), run),
            )

    def mark_missing(self, path: str) -> None:
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
        cause = missing_cause(row[1], twin[0] if twin else None)
        with transaction(self.conn):
            self._clear_steps(int(row[0]))
            self.conn.execute(
                "UPDATE runs SET state='missing', cause=? WHERE id=?", (cause, row[0])
            )

    def under(self, prefix: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT path FROM runs WHERE substr(path, 1, ?) = ? AND state != 'missing'",
            (len(prefix), prefix),
        )
        return [str(p) for (p,) in rows]

    def known_paths(self) -> list[str]:
        return [str(p) for (p,) in self.conn.execute("SELECT path FROM runs ORDER BY time DESC")]

    def note(self, path: str, source: str, recording: bool, error: str) -> bool:
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
        return bool(forgotten)

    def running(self, ids: Sequence[int] | None = None) -> list[RunningRow]:
        if ids is None:
            rows = self.conn.execute(_RUNNING).fetchall()
        elif not ids:
            return []
        else:
            marks = ",".join("?" * len(ids))
            rows = self.conn.execute(f"{_RUNNING} AND id IN ({marks})", tuple(ids)).fetchall()
        return [
            (int(i), str(p), str(f), str(facts or ""), bool(px), bool(lv), str(e or ""), m)
            for i, p, f, facts, px, lv, e, m in rows
        ]

    def set_outcomes(self, changes: Sequence[tuple[int, str, str]]) -> None:
        if changes:
            with transaction(self.conn):
                self.conn.executemany(
                    "UPDATE runs SET outcome = ?, why = ? WHERE id = ? AND outcome = 'running'",
                    [(status, why, run) for run, status, why in changes],
                )

    def cause(self, path: str) -> str:
        row = self.conn.execute("SELECT cause FROM runs WHERE path = ?", (path,)).fetchone()
        return str(row[0]) if row else ""

    def known(self, path: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM runs WHERE path = ?", (path,)).fetchone() is not None
        )

    def forget(self, path: str) -> bool:
        row = self.conn.execute("SELECT id, state FROM runs WHERE path = ?", (path,)).fetchone()
        if row is None or row[1] == FORGOTTEN:
            return False
        with transaction(self.conn):
            self._clear_steps(int(row[0]))
            self.conn.execute("UPDATE runs SET state = ? WHERE id = ?", (FORGOTTEN, row[0]))
        return True

    def published(self, path: str, url: str, digest: str) -> None:
        with transaction(self.conn):
            run = self._upsert(path)
            self.conn.execute(
                "UPDATE runs SET url = ?, digest = ?, author = ?, source = 'published' "
                "WHERE id = ?",
                (url, digest, self.author, run),
            )

    def setting(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_setting(self, key: str, value: str) -> None:
        with transaction(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def copy_here(self, run: int) -> str | None:
        row = self.conn.execute("SELECT path FROM runs WHERE id = ?", (run,)).fetchone()
        return str(row[0]) if row else None  # every run of this library is on this machine

    # -- reading -----------------------------------------------------------------------
    def count(self) -> int:
        row = self.conn.execute("SELECT count(*) FROM runs WHERE state != 'forgotten'").fetchone()
        return int(row[0])

    def page(
        self, q: SearchQuery, sort: str, descending: bool, limit: int, offset: int
    ) -> list[RunRow]:
        where, args = run_conditions(q) if not q.empty else ([], [])
        if not q.match and where:
            where[0] = "1"  # run keys alone keep missing and unreadable runs listed
        where.append("r.state != 'forgotten'")  # forgotten by the user (Indexer.forget)
        order = f"{SORTS[sort]} {'DESC' if descending else 'ASC'} NULLS LAST, r.id DESC"
        sql = f"SELECT {RUN_COLUMNS} FROM runs r WHERE {' AND '.join(where)} ORDER BY {order}"
        if not q.match:
            rows = self.conn.execute(f"{sql} LIMIT ? OFFSET ?", [*args, limit, offset])
            return [RunRow.of(r) for r in rows]
        ids = self._runs_matching(q)
        if ids is not None:
            sql = sql.replace(" ORDER BY", " AND r.id IN (SELECT value FROM json_each(?)) ORDER BY")
            rows = self.conn.execute(
                f"{sql} LIMIT ? OFFSET ?", [*args, json.dumps(ids), limit, offset]
            )
            return [RunRow.of(r) for r in rows]
        return self._probe_runs(sql, args, q, limit, offset)

    def _runs_matching(self, q: SearchQuery) -> list[int] | None:
        """The runs with a step matching ``q``, or None when more than
        :data:`EXACT_STEPS` steps match (then most runs do: see :meth:`_probe_runs`)."""
        names = "tool, agent" if q.tools or q.agents else "'', ''"  # reading them costs
        rows = self.conn.execute(
            f"SELECT rowid / ?, {names} FROM step_fts WHERE step_fts MATCH ? LIMIT ?",
            (STEP_SPAN, q.match, EXACT_STEPS + 1),
        ).fetchall()
        if len(rows) > EXACT_STEPS:
            return None
        return sorted({run for run, tool, agent in rows if q.keeps(tool, agent)})

    def _probe_runs(
        self, sql: str, args: list[Any], q: SearchQuery, limit: int, offset: int
    ) -> list[RunRow]:
        """A common term: walk the runs in the page's order and keep those with a matching
        step (one rowid-range probe each) until the page is full. Why: collecting every
        matching step of a word in a third of ten million steps takes seconds; a page of
        runs that mostly match is filled after a few hundred probes."""
        out: list[RunRow] = []
        probe = (
            "SELECT tool, agent FROM step_fts WHERE step_fts MATCH ? AND rowid >= ? AND rowid < ?"
        )
        if not (q.tools or q.agents):
            probe += " LIMIT 1"  # any matching step will do
        skip, examined = offset, 0
        for row in self.conn.execute(sql, args):
            run = int(row[0])
            kept = False
            for tool, agent in self.conn.execute(
                probe, (q.match, step_rowid(run, 0), step_rowid(run + 1, 0))
            ):
                examined += 1
                if q.keeps(tool, agent):
                    kept = True
                    break
            if examined > EXAMINED:
                break  # see hits(): a glob the index cannot narrow
            if kept:
                if skip:
                    skip -= 1
                    continue
                out.append(RunRow.of(row))
                if len(out) >= limit:
                    break
        return out

    def run(self, path: str) -> RunRow | None:
        row = self.conn.execute(
            f"SELECT {RUN_COLUMNS} FROM runs r WHERE path = ? AND state != 'forgotten'", (path,)
        ).fetchone()
        return RunRow.of(row) if row else None

    def branches(self, path: str) -> list[RunRow]:
        rows = self.conn.execute(
            f"SELECT {RUN_COLUMNS} FROM runs r WHERE parent = ? AND state != 'forgotten' "
            "ORDER BY time, id",
            (path,),
        )
        return [RunRow.of(r) for r in rows]

    def hits(self, q: SearchQuery, limit: int) -> list[Hit]:
        where, args = run_conditions(q)
        sql = (
            "SELECT s.rowid, s.seq, snippet(step_fts, 0, char(2), char(3), '…', ?), "
            "s.tool, s.agent, r.path, r.id, s.sample, r.time, r.host, r.url "
            "FROM step_fts s JOIN runs r ON r.id = s.rowid / ? "
            f"WHERE step_fts MATCH ? AND {' AND '.join(where)} ORDER BY s.rowid DESC"
        )
        found: list[tuple[int, Hit]] = []
        rows = self.conn.execute(sql, [SNIPPET_WORDS, STEP_SPAN, q.match, *args])
        for examined, row in enumerate(rows):
            if examined >= EXAMINED:
                break  # a glob the index cannot narrow (``tool:*sh``): the newest steps only
            rowid, seq, snip, tool, agent, path, run, sample, when, host, url = row
            if q.keeps(tool, agent):
                text, marks = split_marks(snip)
                hit = Hit(path, seq, text, marks, tool, agent, run, sample or "", when, host, url)
                found.append((rowid, hit))
                if len(found) >= limit:
                    break
        return in_run_order(found)

    def run_hits(self, q: SearchQuery, limit: int) -> list[Hit]:
        where, args = run_conditions(q)
        sql = (
            f"SELECT path, title, id, time, host, url FROM runs r WHERE {' AND '.join(where)} "
            "ORDER BY time DESC LIMIT ?"
        )
        return [
            Hit(p, None, t, (), "", "", i, time=w, host=h, url=u)
            for p, t, i, w, h, u in self.conn.execute(sql, [*args, limit])
        ]


def missing_cause(size: int | None, twin: str | None) -> str:
    """Why a run's file is missing: never written, moved (a file of the same size and time
    appeared elsewhere), or gone."""
    if size is None:  # never read: the app opened it before it was written
        return "not written yet"
    return f"moved to {twin}" if twin else "the file is gone"


def in_run_order(found: list[tuple[Any, Hit]]) -> list[Hit]:
    """Hits found newest step first, as the Runs page lists runs (newest first) with a
    run's hits in step order (``found``: (a key ordering a run's steps, hit))."""
    when = {hit.run_id: hit.time or 0.0 for _k, hit in found}
    found.sort(key=lambda item: (-when[item[1].run_id], -item[1].run_id, item[0]))
    return [hit for _k, hit in found]
