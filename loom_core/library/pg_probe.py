"""What Settings ▸ Library…'s "Test connection" says of a team library, in one short look.

Why not open the library to test it: opening waits up to two minutes for a database that
is restarting and applies migrations, and a test of a URL typed a moment ago must answer
in seconds and change nothing. One connection, a few reads, closed again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loom_core.errors import LoadError
from loom_core.library.pg_schema import check_url, connect_kwargs, redacted


@dataclass(frozen=True)
class Probe:
    """What the database said."""

    server: str  # e.g. "PostgreSQL 15.8"
    tls: bool
    schema: int  # 0: no library here yet (its tables are made on first use)
    runs: int
    store: str  # the run store the library names ("" none)

    def text(self) -> str:
        where = f"{self.server} {'over TLS' if self.tls else 'without TLS'}"
        if not self.schema:
            return f"{where} · no library here yet: its tables are made when it is first used"
        store = f"run store {self.store}" if self.store else "no run store named yet"
        return f"{where} · library schema {self.schema} · {self.runs:,} runs · {store}"


def probe(url: str) -> Probe:
    """Connect once to ``url`` and read what :class:`Probe` holds; LoadError naming the
    URL (password-free) and the cause when that fails."""
    import psycopg

    check_url(url)
    try:
        with psycopg.connect(url, **connect_kwargs()) as conn:
            return _look(conn)
    except psycopg.Error as err:
        cause = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise LoadError(redacted(url), f"cannot connect: {cause}") from err


def _look(conn: Any) -> Probe:
    version = conn.info.server_version  # e.g. 150008
    server = f"PostgreSQL {version // 10000}.{version % 100}"
    tls = bool(conn.pgconn.ssl_in_use)
    execute = conn.execute
    if execute("SELECT to_regclass('loom_schema')").fetchone()[0] is None:
        return Probe(server, tls, 0, 0, "")
    schema = int(execute("SELECT coalesce(max(version), 0) FROM loom_schema").fetchone()[0])
    runs = int(execute("SELECT count(*) FROM runs WHERE state != 'forgotten'").fetchone()[0])
    row = execute("SELECT value FROM settings WHERE key = 'store'").fetchone()
    return Probe(server, tls, schema, runs, row[0] if row else "")
