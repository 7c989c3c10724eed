"""Reading the library: the Runs page's list and the search across every run's steps.

:class:`Library` is a reader: open one per thread (the desktop: one in its worker). It
parses the search language once (:mod:`.query`) and asks its database
(:mod:`.backend`: the user's SQLite file or a team's PostgreSQL) for the rows; a run
stored as running is decided again as it is listed, since its writer may be gone.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from loom_core.errors import LoadError
from loom_core.library.address import as_runs_db
from loom_core.library.backend import RunsDb
from loom_core.library.db import norm
from loom_core.library.outcomes import current
from loom_core.library.query import SearchQuery, parse_search
from loom_core.library.rows import Hit, RunRow
from loom_core.library.sqlite_runs import SORTS
from loom_core.live.outcome import RUNNING

__all__ = ["SORTS", "Library"]


class Library:
    """A reader of the run library (see the module docstring)."""

    def __init__(self, address: str | Path | RunsDb | None = None) -> None:
        self.db: RunsDb = as_runs_db(address)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def count(self) -> int:
        return self.db.count()

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
        if sort not in SORTS:
            raise LoadError("runs", f"no sort “{sort}”; sorts are {', '.join(SORTS)}")
        q = self._parsed(query)
        return self._now(self.db.page(q, sort, descending, limit, offset))

    def _now(self, rows: list[RunRow]) -> list[RunRow]:
        """``rows`` with the outcome of those stored as running decided again
        (:func:`loom_core.library.outcomes.current`)."""
        now = current(self.db, [r.id for r in rows if r.outcome == RUNNING])
        return [
            replace(r, outcome=now[r.id].status, why=now[r.id].why) if r.id in now else r
            for r in rows
        ]

    def run(self, path: str | Path) -> RunRow | None:
        """The library's row for ``path`` (spelled as the indexer spells it), or None."""
        row = self.db.run(norm(path))
        return self._now([row])[0] if row else None

    def branches(self, path: str | Path) -> list[RunRow]:
        """The runs forked from ``path`` (heal winners carry ``healed_by``), oldest first."""
        return self.db.branches(norm(path))

    def search(self, query: str, limit: int = 100) -> list[Hit]:
        """Steps across all readable runs matching ``query``, newest runs first, each run's
        hits in step order.
        LoadError (naming the query) when it has a problem; [] when it is empty."""
        q = self._parsed(query)
        if q.nothing or not q.clauses:
            return [] if q.nothing or q.empty else self.db.run_hits(q, limit)
        return self.db.hits(q, limit)

    @staticmethod
    def _parsed(query: str) -> SearchQuery:
        q = parse_search(query)
        if q.problems:
            raise LoadError(f"search “{query.strip()}”", "; ".join(q.problems))
        return q
