"""One library interface, two databases behind it: the user's SQLite file or a team's PostgreSQL.

Why an interface at the level of a run, not of SQL: the two databases differ in every
statement that matters (FTS5 against a ``tsvector``, rowid ranges against keys, one writer
against many), and what the library does with a run -- decide whether a file changed, read
it, decide its outcome, mark it missing -- is the same for both. :class:`RunsDb` is what
:class:`~loom_core.library.index.Indexer` (the writer) and
:class:`~loom_core.library.search.Library` (the reader) ask of a database; each backend
module implements it: :mod:`.sqlite_runs` and :mod:`.pg_backend`.

Which one: a library address -- what ``--library`` takes, what the desktop's settings hold
-- is a ``postgresql://`` URL or a SQLite file's path (:mod:`.address` opens it; kept apart
so that the backends, which import this interface, are not imported by it).
"""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from loom_core.library.extract import StepText
from loom_core.library.query import SearchQuery
from loom_core.library.rows import Hit, RunRow

# a run's outcome (status, why) from what the app noted about it: (live, error)
Decide = Callable[[bool, str], tuple[str, str]]
# (id, path, format, facts JSON, proxy, live, error, mtime_ns) of a run stored as running
RunningRow = tuple[int, str, str, str, bool, bool, str, int | None]


class RunsDb(Protocol):
    """What the library asks of its database (see the module docstring)."""

    address: str  # what opens it again: a file path or a URL without its password
    host: str  # this machine, as the database names it
    author: str  # who indexes and publishes from here

    def close(self) -> None: ...
    def flush(self) -> None:
        """Wait until every write handed in is committed; raise the first one's error
        (the team library writes runs in flight: :mod:`.pg_later`)."""

    # -- writing (Indexer) ------------------------------------------------------------
    def row(self, path: str) -> tuple[int, int | None, int | None, str] | None:
        """(id, size, mtime_ns, state) of the run whose file is ``path`` here."""

    def parts(self, run: int) -> list[str]: ...
    def owner(self, part: str) -> str | None: ...
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
        """Write a run's row (``values``: runs columns but its outcome), its parts and its
        steps, at once; its outcome is ``outcome(live, error)`` of what the app noted about
        it (asked as the run is written: the team library reads it in the run's write)."""

    def store_broken(self, path: str, size: int, mtime_ns: int, cause: str) -> None: ...
    def mark_missing(self, path: str) -> None: ...
    def under(self, prefix: str) -> list[str]:
        """Paths of runs here under ``prefix`` (ending in a separator), not yet missing."""

    def known_paths(self) -> list[str]: ...
    def note(self, path: str, source: str, recording: bool, error: str) -> bool:
        """Record what the app did with the run; whether the user had forgotten it."""

    def running(self, ids: Sequence[int] | None = None) -> list[RunningRow]:
        """Runs stored as running whose writer this machine can see (``ids``: only those)."""

    def set_outcomes(self, changes: Sequence[tuple[int, str, str]]) -> None:
        """(id, outcome, why) for runs that were running."""

    def cause(self, path: str) -> str: ...
    def known(self, path: str) -> bool: ...
    def forget(self, path: str) -> bool: ...
    def published(self, path: str, url: str, digest: str) -> None:
        """The run at ``path`` here is in the run store at ``url`` (its content: ``digest``)."""

    def setting(self, key: str) -> str | None:
        """A setting the library keeps for everyone who uses it (``store``: the run store)."""

    def set_setting(self, key: str, value: str) -> None: ...
    def copy_here(self, run: int) -> str | None:
        """A file on this machine with the run's content (its own, or a copy), if any."""

    # -- reading (Library) -------------------------------------------------------------
    def count(self) -> int: ...
    def page(
        self, q: SearchQuery, sort: str, descending: bool, limit: int, offset: int
    ) -> list[RunRow]: ...
    def run(self, path: str) -> RunRow | None: ...
    def branches(self, path: str) -> list[RunRow]: ...
    def hits(self, q: SearchQuery, limit: int) -> list[Hit]:
        """Steps matching ``q``'s step terms, newest runs first, a run's hits in order."""

    def run_hits(self, q: SearchQuery, limit: int) -> list[Hit]:
        """Run keys alone: one hit per run, at its start."""


def this_host() -> str:
    """This machine's name as the library records it (``LOOM_HOST`` overrides it)."""
    return os.environ.get("LOOM_HOST") or socket.gethostname()


def this_author() -> str:
    """Who indexes and publishes from here: ``LOOM_AUTHOR``, else the OS user."""
    if os.environ.get("LOOM_AUTHOR"):
        return os.environ["LOOM_AUTHOR"]
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"
