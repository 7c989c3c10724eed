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


COMMON_STEPS = 2_000  # more matching steps than this (and than ...
COMMON_PER_RUN = 5  # ... this many per run): the newest runs are probed one by one


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
        if self._common(steps, step_args):
            found = (  # newest runs first, each probed through its own steps: stops at limit
                "SELECT s.run, s.pos FROM runs r CROSS JOIN LATERAL (SELECT s.run, s.pos "
                f"FROM steps s WHERE s.run = r.id AND {' AND '.join(steps)} "
                f"ORDER BY s.pos DESC) s WHERE {' AND '.join(runs)} "
                "ORDER BY r.id DESC, s.pos DESC LIMIT %s"
            )
        else:  # every match from the index, only their keys sorted
            found = (
                "SELECT s.run, s.pos FROM steps s JOIN runs r ON r.id = s.run "
                f"WHERE {' AND '.join(steps + runs)} ORDER BY s.run DESC, s.pos DESC LIMIT %s"
            )
        sql = (
            "SELECT s.run, s.pos, s.seq, s.body, s.tool, s.agent, r.path, s.sample, r.time, "
            f"r.host, r.url FROM ({found}) m JOIN steps s ON s.run = m.run AND s.pos = m.pos "
            "JOIN runs r ON r.id = s.run ORDER BY s.run DESC, s.pos DESC"
        )
        args = (*step_args, *run_args, limit)
        rows = self.db.retry(lambda c: c.execute(sql, args).fetchall())
        wanted = query_words(q)
        hits: list[tuple[Any, Hit]] = []
        for run, pos, seq, body, tool, agent, path, sample, when, host, url in rows:
            if q.keeps(tool, agent):
                text, marks = snippet(body, wanted)
                hit = Hit(path, seq, text, marks, tool, agent, run, sample, when, host, url)
                hits.append((pos, hit))
        return in_run_order(hits)

    def _common(self, steps: list[str], args: Sequence[Any]) -> bool:
        """Whether a search matches so many steps that the newest runs hold enough of them
        (more than :data:`COMMON_PER_RUN` per run on average, and over
        :data:`COMMON_STEPS`): then the newest runs are probed one by one, else every match
        is taken from the index and the keys sorted (a rare word may be in any run).
        Counting stops at that bound."""
        bound = max(COMMON_STEPS, COMMON_PER_RUN * self._run_count())
        sql = f"SELECT count(*) FROM (SELECT 1 FROM steps s WHERE {' AND '.join(steps)} LIMIT %s) m"
        row = self.db.retry(lambda c: c.execute(sql, (*args, bound + 1)).fetchone())
        return bool(row) and int(row[0]) > bound

    def _run_count(self) -> int:
        """The planner's estimate of the runs table's size (exact counting costs a scan)."""
        sql = "SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE relname = 'runs'"
        row = self.db.retry(lambda c: c.execute(sql).fetchone())
        return int(row[0]) if row else 0

    def run_hits(self, q: SearchQuery, limit: int) -> list[Hit]:
        where, args = run_conditions(q)
        sql = (
            f"SELECT path, title, id, time, host, url FROM runs r WHERE {' AND '.join(where)} "
            "ORDER BY time DESC NULLS LAST LIMIT %s"
        )
        rows = self.db.retry(lambda c: c.execute(sql, (*args, limit)).fetchall())
        return [Hit(p, None, t, (), "", "", i, time=w, host=h, url=u) for p, t, i, w, h, u in rows]
