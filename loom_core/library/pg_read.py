"""The team library's reads: pages of runs for the Runs page, the search across every step.

Why these queries: steps are keyed ``(run, pos)`` and run ids grow as runs are indexed,
so walking that key backwards yields the newest runs' hits first. For a common word
PostgreSQL walks it and stops after a page of hits; for a rare one it reads the GIN
index's few matches; the planner picks by the word's frequency, which it keeps in the
column's statistics. A page of runs with a step term is the runs with a matching step
(``EXISTS``), in the page's order. A tool glob or agent name the words cannot narrow is
tested with ``ILIKE`` on trigram-indexed columns, and exactly in Python as the local
library does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loom_core.library.pg_conn import PgConnections
from loom_core.library.pg_query import (
    name_conditions,
    query_words,
    run_conditions,
    snippet,
    tsquery,
)
from loom_core.library.query import SearchQuery
from loom_core.library.rows import RUN_COLUMNS, Hit, RunRow
from loom_core.library.sqlite_runs import SORTS, in_run_order

_RUN_COLUMNS = ", ".join(f"r.{c.strip()}" for c in RUN_COLUMNS.split(","))


def step_conditions(q: SearchQuery) -> tuple[list[str], list[Any]]:
    """The step terms as conditions on ``s`` (steps): the tsquery and the name tests."""
    where: list[str] = []
    args: list[Any] = []
    text = tsquery(q)
    if text:
        where.append("s.doc @@ to_tsquery('simple', %s)")
        args.append(text)
    names, name_args = name_conditions(q)
    return where + names, args + name_args


class PgReads:
    """The reading half of :class:`~loom_core.library.pg_backend.PgRunsDb`."""

    db: PgConnections
    host: str

    def _rows(self, sql: str, args: Sequence[Any]) -> list[RunRow]:
        rows = self.db.retry(lambda c: c.execute(sql, args).fetchall())
        return [RunRow.of(tuple(r)) for r in rows]

    def count(self) -> int:
        row = self.db.retry(
            lambda c: c.execute("SELECT count(*) FROM runs WHERE state != 'forgotten'").fetchone()
        )
        return int(row[0])

    def page(
        self, q: SearchQuery, sort: str, descending: bool, limit: int, offset: int
    ) -> list[RunRow]:
        where, args = run_conditions(q) if not q.empty else ([], [])
        if not q.clauses and where:
            where[0] = "TRUE"  # run keys alone keep missing and unreadable runs listed
        where.append("r.state != 'forgotten'")
        if q.clauses:
            steps, step_args = step_conditions(q)
            where.append(
                f"EXISTS (SELECT 1 FROM steps s WHERE s.run = r.id AND {' AND '.join(steps)})"
            )
            args += step_args
        order = f"{SORTS[sort]} {'DESC' if descending else 'ASC'} NULLS LAST, r.id DESC"
        sql = (
            f"SELECT {_RUN_COLUMNS} FROM runs r WHERE {' AND '.join(where)} "
            f"ORDER BY {order} LIMIT %s OFFSET %s"
        )
        return self._rows(sql, [*args, limit, offset])

    def run(self, path: str) -> RunRow | None:
        rows = self._rows(
            f"SELECT {_RUN_COLUMNS} FROM runs r WHERE host = %s AND path = %s "
            "AND state != 'forgotten'",
            (self.host, path),
        )
        return rows[0] if rows else None

    def branches(self, path: str) -> list[RunRow]:
        return self._rows(
            f"SELECT {_RUN_COLUMNS} FROM runs r WHERE host = %s AND parent = %s "
            "AND state != 'forgotten' ORDER BY time, id",
            (self.host, path),
        )

    def hits(self, q: SearchQuery, limit: int) -> list[Hit]:
        steps, step_args = step_conditions(q)
        runs, run_args = run_conditions(q)
        sql = (
            "SELECT s.run, s.pos, s.seq, s.body, s.tool, s.agent, r.path, s.sample, r.time, "
            "r.host, r.url FROM steps s JOIN runs r ON r.id = s.run "
            f"WHERE {' AND '.join(steps + runs)} ORDER BY s.run DESC, s.pos DESC LIMIT %s"
        )
        rows = self.db.retry(lambda c: c.execute(sql, (*step_args, *run_args, limit)).fetchall())
        wanted = query_words(q)
        found: list[tuple[Any, Hit]] = []
        for run, pos, seq, body, tool, agent, path, sample, when, host, url in rows:
            if q.keeps(tool, agent):
                text, marks = snippet(body, wanted)
                hit = Hit(path, seq, text, marks, tool, agent, run, sample, when, host, url)
                found.append((pos, hit))
        return in_run_order(found)

    def run_hits(self, q: SearchQuery, limit: int) -> list[Hit]:
        where, args = run_conditions(q)
        sql = (
            f"SELECT path, title, id, time, host, url FROM runs r WHERE {' AND '.join(where)} "
            "ORDER BY time DESC NULLS LAST LIMIT %s"
        )
        rows = self.db.retry(lambda c: c.execute(sql, (*args, limit)).fetchall())
        return [Hit(p, None, t, (), "", "", i, time=w, host=h, url=u) for p, t, i, w, h, u in rows]
