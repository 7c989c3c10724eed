"""A team's run library on PostgreSQL: :class:`~loom_core.library.backend.RunsDb` for a URL.

The writes are :mod:`.pg_write`'s, the reads :mod:`.pg_read`'s, the connections and the
schema :mod:`.pg_conn`'s and :mod:`.pg_schema`'s; this class ties them to one database
and to this machine and user (every run is recorded with where its file is and who
indexed or published it).
"""

from __future__ import annotations

from loom_core.library.pg_conn import PgConnections
from loom_core.library.pg_read import PgReads
from loom_core.library.pg_schema import redacted
from loom_core.library.pg_write import PgWrites


class PgRunsDb(PgWrites, PgReads):
    """The library in the PostgreSQL database at ``url`` (no password in it)."""

    def __init__(self, url: str, host: str, author: str) -> None:
        self.address = redacted(url)
        self.host, self.author = host, author
        self._ids = []
        self.db = PgConnections(url)

    def close(self) -> None:
        self.db.close()

    def flush(self) -> None:
        self.db.flush()
