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
from collections.abc import Sequence

from loom_core.library.backend import Decide, RunningRow, RunsDb
from loom_core.library.ending import decide
from loom_core.library.extract import RunFacts
from loom_core.live.outcome import RUNNING, Facts, Outcome

RECHECK_EVERY = 5.0  # seconds between looks at the writers of running runs


def outcome_of(path: str, f: RunFacts, mtime: float) -> Decide:
    """How the run at ``path`` about to be stored with facts ``f`` gets its outcome from
    what the app noted about it (recording it, an error that ended it): asked by the
    library's write, which reads those notes (the team library in the run's transaction,
    without a round trip of its own)."""

    def decided(live: bool, error: str) -> tuple[str, str]:
        found = decide(path, f.format, f.ending, proxy=f.proxy, live=live, error=error, mtime=mtime)
        return found.status, found.why

    return decided


def _again(row: RunningRow) -> Outcome:
    """Decide a stored running row again."""
    _, path, fmt, facts, proxy, live, error, mtime_ns = row
    try:
        stored = json.loads(facts) if facts else None
    except ValueError:
        stored = None
    mtime = mtime_ns / 1e9 if mtime_ns is not None else None
    return decide(
        path, fmt, Facts.of_json(stored), proxy=proxy, live=live, error=error, mtime=mtime
    )


def current(db: RunsDb, ids: Sequence[int]) -> dict[int, Outcome]:
    """The outcome now of the runs among ``ids`` stored as running (a reader's view; the
    database is not written)."""
    if not ids:
        return {}
    return {row[0]: _again(row) for row in db.running(ids)}


def recheck(db: RunsDb) -> list[str]:
    """Decide every running run again; store and return the paths whose outcome changed."""
    changed: list[tuple[int, str, Outcome]] = []
    for row in db.running():
        now = _again(row)
        if now.status != RUNNING:
            changed.append((row[0], row[1], now))
    db.set_outcomes([(run, o.status, o.why) for run, _, o in changed])
    return [path for _, path, _ in changed]
