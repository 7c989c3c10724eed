"""The team library's writes: runs, their parts and their steps, on PostgreSQL.

Why a run is keyed by ``(host, path)``: a team's laptops share one database, and the same
path on two machines is two files. A published run's row also names its copy in the run
store (``url``, content-addressed by ``digest``: :mod:`loom_core.library.store`), which is
how another machine opens it.

Every method is one transaction run through :meth:`PgConnections.retry`, so a dropped
connection or a restarted server costs a retry, never a half-written run: the run's row is
upserted (``ON CONFLICT``) and locked, its steps deleted and copied in again, all or nothing.
Two processes indexing the same file queue on that row lock; the second writes the same
facts again. A run's write (:meth:`PgWrites.store`) is handed to a writer thread and goes
on while the indexer reads the next run (:mod:`.pg_later`); every other method first
waits for the writes it could see: its path's, or all.

Why a run's write asks the indexer's thread nothing of the server: each question there
was a round trip the indexer waited for while the server was busy with the writes in
flight (a tenth of the time per run). Its rows are made there (:mod:`.pg_runtext`), its
new id taken from a batch reserved ahead (:data:`IDS_AHEAD`), and what the app noted of
the run (live, error: its outcome) is read by the write itself, in its transaction.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from loom_core.library.backend import Decide, RunningRow
from loom_core.library.extract import StepText
from loom_core.library.pg_conn import PgConnections
from loom_core.library.pg_rows import clamp
from loom_core.library.pg_runtext import RunText
from loom_core.library.pg_steps import STEPS_GONE, delete_steps
from loom_core.library.sqlite_runs import FORGOTTEN, missing_cause

IDS_AHEAD = 16  # new runs' ids reserved in one round trip, used in hand-in order
# a stored run's old rows gone and its outcome set, one statement
_REPLACED = (
    f"WITH {STEPS_GONE}, p AS (DELETE FROM parts WHERE run = %(run)s) "
    "UPDATE runs SET outcome = %(outcome)s, why = %(why)s WHERE id = %(run)s"
)


class PgWrites:
    """The writing half of :class:`~loom_core.library.pg_backend.PgRunsDb`: every method
    one transaction through :meth:`PgConnections.retry` (see the module docstring)."""

    db: PgConnections
    host: str
    author: str
    _ids: list[int]  # new ids reserved ahead, the next last (see the module docstring)

    def _one(
        self, sql: str, args: Sequence[Any], path: str | None = None
    ) -> tuple[Any, ...] | None:
        """One row, once the write of ``path`` in flight (None: every one) is done."""
        row = self.db.retry(lambda c: c.execute(sql, args).fetchone(), path)
        return tuple(row) if row is not None else None

    def _column(self, sql: str, args: Sequence[Any]) -> list[str]:
        rows = self.db.retry(lambda c: c.execute(sql, args).fetchall())
        return [str(r[0]) for r in rows]

    def row(self, path: str) -> tuple[int, int | None, int | None, str] | None:
        """A run indexed before its summary of words existed (schema 2) has no size here,
        so the next index pass reads it again and writes one (pg_steps)."""
        row = self._one(
            "SELECT r.id, CASE WHEN w.run IS NOT NULL AND w.doc IS NULL THEN NULL "
            "ELSE r.size END, r.mtime_ns, r.state FROM runs r "
            "LEFT JOIN run_words w ON w.run = r.id WHERE r.host = %s AND r.path = %s",
            (self.host, path),
            path,
        )
        return (int(row[0]), row[1], row[2], str(row[3])) if row else None

    def parts(self, run: int) -> list[str]:
        return self._column("SELECT path FROM parts WHERE run = %s", (run,))

    def owner(self, part: str) -> str | None:
        row = self._one(
            "SELECT r.path FROM parts p JOIN runs r ON r.id = p.run "
            "WHERE p.host = %s AND p.path = %s",
            (self.host, part),
        )
        return str(row[0]) if row else None

    def _upsert(self, conn: Any, path: str) -> int:
        """The run's id, its row created if new and locked until the transaction ends."""
        row = conn.execute(
            "INSERT INTO runs (host, path, author) VALUES (%s, %s, %s) "
            "ON CONFLICT (host, path) DO UPDATE SET host = EXCLUDED.host RETURNING id",
            (self.host, path, self.author),
        ).fetchone()
        return int(row[0])

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
        columns = {**values, "size": size, "mtime_ns": mtime_ns, "state": "ok", "cause": ""}
        columns["indexed"] = time.time()
        for key in ("tokens_in", "tokens_out", "fork_seq", "steps", "errors"):
            columns[key] = clamp(columns.get(key))
        # a new run's id is taken now, in the order runs are handed in (the search's
        # newest-first order), not when its transaction in flight begins; a run indexed
        # before keeps its own (ON CONFLICT)
        args = (self._new_id(path), self.host, path, self.author, *columns.values())
        names = ", ".join(columns)
        upsert = (  # the run's row, created or updated and locked, and what the app noted
            f"INSERT INTO runs (id, host, path, author, {names}) "
            f"VALUES (%s, %s, %s, %s{', %s' * len(columns)}) ON CONFLICT (host, path) "
            f"DO UPDATE SET ({names}) = ROW({', '.join(f'EXCLUDED.{k}' for k in columns)}) "
            "RETURNING id, live, error"
        )
        made = RunText.of(rows)

        def write(conn: Any) -> None:
            with conn.transaction():
                run, live, error = conn.execute(upsert, args).fetchone()
                status, why = outcome(bool(live), str(error))
                conn.execute(_REPLACED, {"run": run, "outcome": status, "why": why})
                for part in parts:
                    conn.execute(
                        "INSERT INTO parts (host, path, run) VALUES (%s, %s, %s) "
                        "ON CONFLICT (host, path) DO UPDATE SET run = EXCLUDED.run",
                        (self.host, part, run),
                    )
                made.send(conn, run)

        self.db.write_later(path, write)

    def _new_id(self, path: str) -> int:
        """A new run's id: the next of a batch reserved in one round trip (once the
        write of ``path`` in flight is done, as every question about it)."""
        if not self._ids:
            rows = self.db.retry(
                lambda c: c.execute(
                    "SELECT nextval('runs_id_seq') FROM generate_series(1, %s)", (IDS_AHEAD,)
                ).fetchall(),
                path,
            )
            self._ids = sorted((int(r[0]) for r in rows), reverse=True)
        return self._ids.pop()

    def store_broken(self, path: str, size: int, mtime_ns: int, cause: str) -> None:
        mtime = mtime_ns / 1e9

        def write(conn: Any) -> None:
            with conn.transaction():
                run = self._upsert(conn, path)
                delete_steps(conn, run)
                conn.execute(
                    "UPDATE runs SET size=%s, mtime_ns=%s, state='unreadable', cause=%s, "
                    "ended=%s, time=COALESCE(started, %s), indexed=%s WHERE id=%s",
                    (size, mtime_ns, cause, mtime, mtime, time.time(), run),
                )

        self.db.retry(write, path)

    def mark_missing(self, path: str) -> None:
        def write(conn: Any) -> None:
            with conn.transaction():
                row = conn.execute(
                    "SELECT id, size, mtime_ns, live, state FROM runs "
                    "WHERE host = %s AND path = %s FOR UPDATE",
                    (self.host, path),
                ).fetchone()
                if row is None or row[3]:
                    return  # unknown, or being recorded: its file may not be written yet
                if row[4] == FORGOTTEN:  # its steps first: no foreign key cascades (schema 4)
                    delete_steps(conn, row[0])
                    conn.execute("DELETE FROM runs WHERE id = %s", (row[0],))
                    return
                twin = conn.execute(
                    "SELECT path FROM runs WHERE host = %s AND size = %s AND mtime_ns = %s "
                    "AND state = 'ok' AND path != %s LIMIT 1",
                    (self.host, row[1], row[2], path),
                ).fetchone()
                cause = missing_cause(row[1], twin[0] if twin else None)
                delete_steps(conn, row[0])
                conn.execute(
                    "UPDATE runs SET state = 'missing', cause = %s WHERE id = %s", (cause, row[0])
                )

        self.db.retry(write, path)

    def under(self, prefix: str) -> list[str]:
        return self._column(
            "SELECT path FROM runs WHERE host = %s AND starts_with(path, %s) "
            "AND state != 'missing'",
            (self.host, prefix),
        )

    def known_paths(self) -> list[str]:
        return self._column(
            "SELECT path FROM runs WHERE host = %s ORDER BY time DESC NULLS LAST", (self.host,)
        )

    def note(self, path: str, source: str, recording: bool, error: str) -> bool:
        def write(conn: Any) -> bool:
            with conn.transaction():
                run = self._upsert(conn, path)
                row = conn.execute(
                    "SELECT state = %s FROM runs WHERE id = %s", (FORGOTTEN, run)
                ).fetchone()
                conn.execute(
                    "UPDATE runs SET source=%s, noted=%s, live=%s, "
                    "outcome=CASE WHEN %s AND size IS NULL THEN 'running' ELSE outcome END, "
                    "error=CASE WHEN %s OR %s != '' THEN %s ELSE error END WHERE id=%s",
                    (source, time.time(), recording, recording, recording, error, error, run),
                )
                return bool(row[0])

        return self.db.retry(write, path)

    def published(self, path: str, url: str, digest: str) -> None:
        def write(conn: Any) -> None:
            with conn.transaction():
                run = self._upsert(conn, path)
                conn.execute(
                    "UPDATE runs SET url = %s, digest = %s, author = %s, source = 'published' "
                    "WHERE id = %s",
                    (url, digest, self.author, run),
                )

        self.db.retry(write, path)

    def setting(self, key: str) -> str | None:
        row = self._one("SELECT value FROM settings WHERE key = %s", (key,))
        return str(row[0]) if row else None

    def set_setting(self, key: str, value: str) -> None:
        self.db.retry(
            lambda c: c.execute(
                "INSERT INTO settings (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (key, value),
            )
        )

    def copy_here(self, run: int) -> str | None:
        row = self._one("SELECT path FROM runs WHERE id = %s AND host = %s", (run, self.host))
        return str(row[0]) if row else None

    def running(self, ids: Sequence[int] | None = None) -> list[RunningRow]:
        """Runs of THIS machine stored as running: only here can their writer be seen."""
        sql = (
            "SELECT id, path, format, facts, proxy, live, error, mtime_ns FROM runs "
            "WHERE outcome = 'running' AND state = 'ok' AND host = %s"
        )
        args: list[Any] = [self.host]
        if ids is not None:
            if not ids:
                return []
            sql += " AND id = ANY(%s)"
            args.append(list(ids))
        rows = self.db.retry(lambda c: c.execute(sql, args).fetchall())
        return [
            (int(i), str(p), str(f), str(facts or ""), bool(px), bool(lv), str(e or ""), m)
            for i, p, f, facts, px, lv, e, m in rows
        ]

    def set_outcomes(self, changes: Sequence[tuple[int, str, str]]) -> None:
        if not changes:
            return

        def write(conn: Any) -> None:
            with conn.transaction():
                for run, status, why in changes:
                    conn.execute(
                        "UPDATE runs SET outcome = %s, why = %s "
                        "WHERE id = %s AND outcome = 'running'",
                        (status, why, run),
                    )

        self.db.retry(write)

    def cause(self, path: str) -> str:
        row = self._one(
            "SELECT cause FROM runs WHERE host = %s AND path = %s", (self.host, path), path
        )
        return str(row[0]) if row else ""

    def known(self, path: str) -> bool:
        return (
            self._one("SELECT 1 FROM runs WHERE host = %s AND path = %s", (self.host, path), path)
            is not None
        )

    def forget(self, path: str) -> bool:
        def write(conn: Any) -> bool:
            with conn.transaction():
                row = conn.execute(
                    "SELECT id, state FROM runs WHERE host = %s AND path = %s FOR UPDATE",
                    (self.host, path),
                ).fetchone()
                if row is None or row[1] == FORGOTTEN:
                    return False
                delete_steps(conn, row[0])
                conn.execute("UPDATE runs SET state = %s WHERE id = %s", (FORGOTTEN, row[0]))
                return True

        return self.db.retry(write, path)
