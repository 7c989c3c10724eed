"""The library's outcomes in its database: decided when a run is indexed, decided again
while it was running.

Why again: a run is "running" because someone still writes it, and that stops being
true without its file changing (a journal whose writer died mid-tool is never written
again, so nothing would re-index it). :func:`recheck` decides every such run again from
the facts stored with it (:mod:`loom_core.library.ending`); the desktop's indexer calls
it every :data:`RECHECK_EVERY` seconds, and a reader listing runs uses
:func:`current` for the rows it shows, so ``runs list`` says the truth without the app.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from loom_core.library.db import transaction
from loom_core.library.ending import decide
from loom_core.library.extract import RunFacts
from loom_core.live.outcome import RUNNING, Facts, Outcome

RECHECK_EVERY = 5.0  # seconds between looks at the writers of running runs
_RUNNING_ROWS = (
    "SELECT id, path, format, facts, proxy, live, error, mtime_ns FROM runs "
    "WHERE outcome = 'running' AND state = 'ok'"
)


def decided_outcome(conn: sqlite3.Connection, path: str, f: RunFacts, mtime: float) -> Outcome:
    """The outcome of the run at ``path`` about to be stored with facts ``f``, with what the
    app noted about it (recording it, an error that ended it)."""
    row = conn.execute("SELECT live, error FROM runs WHERE path = ?", (path,)).fetchone()
    live, error = (bool(row[0]), str(row[1])) if row else (False, "")
    return decide(path, f.format, f.ending, proxy=f.proxy, live=live, error=error, mtime=mtime)


def _again(row: Sequence[object]) -> Outcome:
    """Decide a stored running row again (its columns as :data:`_RUNNING_ROWS` selects)."""
    _, path, fmt, facts, proxy, live, error, mtime_ns = row
    try:
        stored = json.loads(str(facts)) if facts else None
    except ValueError:
        stored = None
    mtime = int(str(mtime_ns)) / 1e9 if mtime_ns is not None else None
    return decide(
        str(path),
        str(fmt),
        Facts.of_json(stored),
        proxy=bool(proxy),
        live=bool(live),
        error=str(error or ""),
        mtime=mtime,
    )


def current(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Outcome]:
    """The outcome now of the runs among ``ids`` stored as running (a reader's view; the
    database is not written)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"{_RUNNING_ROWS} AND id IN ({marks})", tuple(ids)).fetchall()
    return {int(row[0]): _again(row) for row in rows}


def recheck(conn: sqlite3.Connection) -> list[str]:
    """Decide every running run again; store and return the paths whose outcome changed."""
    changed: list[tuple[int, str, Outcome]] = []
    for row in conn.execute(_RUNNING_ROWS).fetchall():
        now = _again(row)
        if now.status != RUNNING:
            changed.append((int(row[0]), str(row[1]), now))
    if changed:
        with transaction(conn):
            conn.executemany(
                "UPDATE runs SET outcome = ?, why = ? WHERE id = ? AND outcome = 'running'",
                [(o.status, o.why, run) for run, _, o in changed],
            )
    return [path for _, path, _ in changed]
