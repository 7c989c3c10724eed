"""The team library's reads: pages of runs for the Runs page, the search across every step.

Why these queries: steps are keyed ``(run, pos)`` and run ids grow as runs are indexed,
so walking that key backwards yields the newest runs' hits first. A search with words
first asks the runs' summaries which runs may match, then probes those runs' steps
newest first and stops at the limit (:mod:`.pg_runwords`); a page of runs with a step
term is the candidates in the page's order that have a matching step. A
query whose every part is negated probes every run, newest first. A tool glob or agent
name is tested with ``ILIKE`` on the steps the words found, and exactly in Python as the
local library does.
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
from loom_core.library.pg_runwords import (
    CANDIDATES,
    candidates,
    canonical,
    page_runs,
    probe_hits,
    summary_query,
    tuned,
)
from loom_core.library.query import SearchQuery
from loom_core.library.rows import RUN_COLUMNS, Hit, RunRow
from loom_core.library.sqlite_runs import SORTS, in_run_order

_RUN_COLUMNS = ", ".join(f"r.{c.strip()}" for c in RUN_COLUMNS.split(","))


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
        order = f"{SORTS[sort]} {'DESC' if descending else 'ASC'} NULLS LAST, r.id DESC"
        text = tsquery(q) if q.clauses else ""

        def read(conn: Any) -> list[Any]:
            step = canonical(conn, text) if text else ""
            if not step:
                return self._page_plain(conn, q, where, args, order, (limit, offset))
            summary = summary_query(step)
            with conn.transaction():  # the runs whose summary may match, each probed
                tuned(conn)
                ids = (
                    f"SELECT r.id FROM runs r JOIN {CANDIDATES} w ON w.run = r.id"
                    if summary is not None
                    else "SELECT r.id FROM runs r"
                )
                first = (summary,) if summary is not None else ()
                sql = f"{ids} WHERE {' AND '.join(where)} ORDER BY {order}"
                ordered = [int(r[0]) for r in conn.execute(sql, (*first, *args)).fetchall()]
                names, name_args = name_conditions(q)
                kept = page_runs(conn, ordered, names, name_args, (step, summary), limit + offset)
                kept = kept[offset:]
                rows = conn.execute(
                    f"SELECT {_RUN_COLUMNS} FROM runs r WHERE r.id = ANY(%s)", (kept,)
                ).fetchall()
            where_is = {int(r[0]): r for r in rows}
            return [where_is[i] for i in kept if i in where_is]

        return [RunRow.of(tuple(r)) for r in self.db.retry(read)]

    @staticmethod
    def _page_plain(
        conn: Any,
        q: SearchQuery,
        where: list[str],
        args: list[Any],
        order: str,
        window: tuple[int, int],
    ) -> list[Any]:
        """A page without a word to look for: its name tests (if any) on each run's steps;
        a query whose words PostgreSQL's parser makes nothing of matches no step."""
        where, args = list(where), list(args)
        if q.clauses:
            steps, step_args = name_conditions(q)
            if tsquery(q):  # words, none of them a lexeme: an empty tsquery matches nothing
                steps = [*steps, "FALSE"]
            where.append(
                f"EXISTS (SELECT 1 FROM steps s WHERE {' AND '.join(['s.run = r.id', *steps])})"
            )
            args += step_args
        sql = (
            f"SELECT {_RUN_COLUMNS} FROM runs r WHERE {' AND '.join(where)} "
            f"ORDER BY {order} LIMIT %s OFFSET %s"
        )
        return list(conn.execute(sql, [*args, *window]).fetchall())

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
        text = tsquery(q)
        runs, run_args = run_conditions(q)

        def read(conn: Any) -> list[Any]:
            step = canonical(conn, text) if text else ""
            if not step:
                return [] if text else self._hits_by_names(conn, q, runs, run_args, limit)
            names, name_args = name_conditions(q)
            with conn.transaction():
                tuned(conn)
                summary = summary_query(step)
                found = candidates(conn, summary, runs, run_args)
                return probe_hits(conn, found, names, name_args, (step, summary), limit)

        rows = self.db.retry(read)
        wanted = query_words(q)
        hits: list[tuple[Any, Hit]] = []
        for run, pos, seq, body, tool, agent, path, sample, when, host, url in rows:
            if q.keeps(tool, agent):
                text, marks = snippet(body, wanted)
                hit = Hit(path, seq, text, marks, tool, agent, run, sample, when, host, url)
                hits.append((pos, hit))
        return in_run_order(hits)

    @staticmethod
    def _hits_by_names(
        conn: Any, q: SearchQuery, runs: list[str], run_args: list[Any], limit: int
    ) -> list[Any]:
        """The newest steps passing a query's name tests alone (it has no word)."""
        steps, step_args = name_conditions(q)
        found = (
            "SELECT s.run, s.pos FROM steps s JOIN runs r ON r.id = s.run "
            f"WHERE {' AND '.join(steps + runs)} ORDER BY s.run DESC, s.pos DESC LIMIT %s"
        )
        sql = (
            "SELECT s.run, s.pos, s.seq, s.body, s.tool, s.agent, r.path, s.sample, r.time, "
            f"r.host, r.url FROM ({found}) m JOIN steps s ON s.run = m.run AND s.pos = m.pos "
            "JOIN runs r ON r.id = s.run ORDER BY s.run DESC, s.pos DESC"
        )
        return list(conn.execute(sql, (*step_args, *run_args, limit)).fetchall())

    def run_hits(self, q: SearchQuery, limit: int) -> list[Hit]:
        where, args = run_conditions(q)
        sql = (
            f"SELECT path, title, id, time, host, url FROM runs r WHERE {' AND '.join(where)} "
            "ORDER BY time DESC NULLS LAST LIMIT %s"
        )
        rows = self.db.retry(lambda c: c.execute(sql, (*args, limit)).fetchall())
        return [Hit(p, None, t, (), "", "", i, time=w, host=h, url=u) for p, t, i, w, h, u in rows]
