"""Reading the library: the Runs page's list and the search across every run's steps.

Why newest first by rowid: a step's rowid carries its run (see
:func:`loom_core.library.db.step_rowid`), so walking the index backwards yields the newest
runs' hits first without sorting every match; a search for a common word across ten
million steps stops after the first page. :class:`Library` is a reader: open one per thread
(the desktop: one in its worker), it never waits for the indexer (WAL).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

from loom_core.errors import LoadError
from loom_core.library.db import STEP_SPAN, connect, norm, step_rowid
from loom_core.library.outcomes import current
from loom_core.library.query import SearchQuery, parse_search
from loom_core.library.rows import RUN_COLUMNS, Hit, RunRow, split_marks
from loom_core.live.outcome import RUNNING

SNIPPET_WORDS = 16
EXAMINED = 200_000  # steps a tool glob or agent name is checked on, at most, per query
EXACT_STEPS = 20_000  # runs() collects the runs of at most this many matching steps at once
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


def _run_conditions(q: SearchQuery) -> tuple[list[str], list[Any]]:
    where: list[str] = ["r.state = 'ok'"]
    args: list[Any] = []
    if q.models:
        where.append("(" + " OR ".join("r.models LIKE ?" for _ in q.models) + ")")
        args += [f"%{m}%" for m in q.models]
    if q.after is not None:
        where.append("r.time >= ?")
        args.append(q.after)
    if q.before is not None:
        where.append("r.time < ?")
        args.append(q.before)
    return where, args


class Library:
    """A reader of the run library (see the module docstring)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.conn: sqlite3.Connection = connect(path)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def count(self) -> int:
        return int(
            self.conn.execute("SELECT count(*) FROM runs WHERE state != 'forgotten'").fetchone()[0]
        )

    def runs(
        self,
        query: str = "",
        sort: str = "time",
        descending: bool = True,
        limit: int = 200,
        offset: int = 0,
    ) -> list[RunRow]:
        """A page of runs, sorted; ``query`` (search syntax) keeps the runs it matches
        (step terms: a run with a matching step). Missing and unreadable runs are listed
        too unless the query names a step term. LoadError for a query with a problem.
        A run stored as running says what it is now (its writer may be gone since)."""
        return self._now(self._page(query, sort, descending, limit, offset))

    def _now(self, rows: list[RunRow]) -> list[RunRow]:
        """``rows`` with the outcome of those stored as running decided again
        (:func:`loom_core.library.outcomes.current`)."""
        now = current(self.conn, [r.id for r in rows if r.outcome == RUNNING])
        return [
            replace(r, outcome=now[r.id].status, why=now[r.id].why) if r.id in now else r
            for r in rows
        ]

    def _page(
        self, query: str, sort: str, descending: bool, limit: int, offset: int
    ) -> list[RunRow]:
        if sort not in SORTS:
            raise LoadError("runs", f"no sort “{sort}”; sorts are {', '.join(SORTS)}")
        q = self._parsed(query)
        where, args = _run_conditions(q) if not q.empty else ([], [])
        if not q.match and where:
            where[0] = "1"  # run keys alone keep missing and unreadable runs listed
        where.append("r.state != 'forgotten'")  # forgotten by the user (Indexer.forget)
        order = f"{SORTS[sort]} {'DESC' if descending else 'ASC'} NULLS LAST, r.id DESC"
        sql = f"SELECT {RUN_COLUMNS} FROM runs r WHERE {' AND '.join(where)} ORDER BY {order}"
        if not q.match:
            return [
                RunRow.of(r)
                for r in self.conn.execute(f"{sql} LIMIT ? OFFSET ?", [*args, limit, offset])
            ]
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
                break  # see search(): a glob the index cannot narrow
            if kept:
                if skip:
                    skip -= 1
                    continue
                out.append(RunRow.of(row))
                if len(out) >= limit:
                    break
        return out

    def run(self, path: str | Path) -> RunRow | None:
        """The library's row for ``path`` (spelled as the indexer spells it), or None."""
        row = self.conn.execute(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE path = ? AND state != 'forgotten'",
            (norm(path),),
        ).fetchone()
        return self._now([RunRow.of(row)])[0] if row else None

    def branches(self, path: str | Path) -> list[RunRow]:
        """The runs forked from ``path`` (heal winners carry ``healed_by``), oldest first."""
        rows = self.conn.execute(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE parent = ? AND state != 'forgotten' "
            "ORDER BY time, id",
            (norm(path),),
        )
        return [RunRow.of(r) for r in rows]

    def search(self, query: str, limit: int = 100) -> list[Hit]:
        """Steps across all readable runs matching ``query``, newest runs first, each run's
        hits in step order.
        LoadError (naming the query) when it has a problem; [] when it is empty."""
        q = self._parsed(query)
        if q.nothing or not q.match:
            return [] if q.nothing or q.empty else self._run_hits(q, limit)
        where, args = _run_conditions(q)
        sql = (
            "SELECT s.rowid, s.seq, snippet(step_fts, 0, char(2), char(3), '…', ?), "
            "s.tool, s.agent, r.path, r.id, s.sample, r.time "
            "FROM step_fts s JOIN runs r ON r.id = s.rowid / ? "
            f"WHERE step_fts MATCH ? AND {' AND '.join(where)} ORDER BY s.rowid DESC"
        )
        found: list[tuple[int, Hit]] = []
        rows = self.conn.execute(sql, [SNIPPET_WORDS, STEP_SPAN, q.match, *args])
        for examined, (rowid, seq, snip, tool, agent, path, run, sample, when) in enumerate(rows):
            if examined >= EXAMINED:
                break  # a glob the index cannot narrow (``tool:*sh``): the newest steps only
            if q.keeps(tool, agent):
                text, marks = split_marks(snip)
                hit = Hit(path, seq, text, marks, tool, agent, run, sample or "", when)
                found.append((rowid, hit))
                if len(found) >= limit:
                    break
        # newest runs first, as the Runs page lists them; a run's hits in step order
        when = {hit.run_id: hit.time or 0.0 for _r, hit in found}
        found.sort(key=lambda item: (-when[item[1].run_id], -item[1].run_id, item[0]))
        return [hit for _r, hit in found]

    def _run_hits(self, q: SearchQuery, limit: int) -> list[Hit]:
        """Run keys alone (``model:x after:…``): one hit per run, at its start."""
        where, args = _run_conditions(q)
        sql = f"SELECT path, title, id, time FROM runs r WHERE {' AND '.join(where)} ORDER BY time DESC LIMIT ?"
        return [
            Hit(p, None, t, (), "", "", i, time=w)
            for p, t, i, w in self.conn.execute(sql, [*args, limit])
        ]

    @staticmethod
    def _parsed(query: str) -> SearchQuery:
        q = parse_search(query)
        if q.problems:
            raise LoadError(f"search “{query.strip()}”", "; ".join(q.problems))
        return q
