"""A library's address opened: a ``postgresql://`` URL or a SQLite file's path.

None means ``LOOM_LIBRARY_URL``, else the per-user SQLite file (``LOOM_DESKTOP_LIBRARY``
moves it). Apart from :mod:`.backend` (the interface) because it imports both backends,
which import the interface.
"""

from __future__ import annotations

from pathlib import Path

from loom_core.library.backend import RunsDb, this_author, this_host


def is_url(address: str | Path | None) -> bool:
    return isinstance(address, str) and address.startswith(("postgresql://", "postgres://"))


def default_address() -> str:
    """The library this process uses when none is named (see the module docstring)."""
    from loom_core.library.db import library_path
    from loom_core.library.pg_schema import library_url

    return library_url() or str(library_path())


def as_runs_db(db: RunsDb | str | Path | None) -> RunsDb:
    """``db`` itself, or the database at that address (:func:`open_runs`)."""
    return open_runs(db) if db is None or isinstance(db, (str, Path)) else db


def open_runs(address: str | Path | None = None) -> RunsDb:
    """The database at ``address`` (a URL or a file; None: :func:`default_address`)."""
    target = str(address) if address is not None else default_address()
    if is_url(target):
        from loom_core.library.pg_backend import PgRunsDb
        from loom_core.library.pg_schema import check_url

        check_url(target)
        return PgRunsDb(target, this_host(), this_author())
    from loom_core.library.sqlite_runs import SqliteRunsDb

    return SqliteRunsDb(target, this_host(), this_author())
