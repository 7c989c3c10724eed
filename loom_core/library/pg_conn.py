"""Connections to the team library: one pool per process, every operation retried through a
dropped connection or a server restart.

Why retry here and not in each caller: a laptop's Wi-Fi drops, a database fails over,
an administrator restarts the server while three CI jobs index. Every write of the
library is one transaction that can be run again with the same result (an upsert keyed
by the run's place, its steps replaced whole), so an operation that failed because the
connection went away is simply run again on a new connection, for up to
:data:`RETRY_SECONDS`, with a growing pause. What is not a connection problem (a bug, a
constraint that says no) is raised at once, and so is a pool this process closed (the
library switched or the window closing while a task still asked it): no server will
come back to it, and a retry would hold a worker thread for the whole two minutes.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from loom_core.errors import LoadError
from loom_core.library.pg_later import WritesInFlight
from loom_core.library.pg_schema import URL_ENV, connect_kwargs, migrate, redacted

RETRY_SECONDS = 120.0  # LOOM_LIBRARY_RETRY_SECONDS changes it (a script that cannot wait)
RETRY_ENV = "LOOM_LIBRARY_RETRY_SECONDS"


def retry_seconds() -> float:
    """How long an operation is retried: :data:`RETRY_SECONDS` unless the environment
    says otherwise (an unreadable value is ignored, not an error at exit time)."""
    try:
        return max(0.0, float(os.environ.get(RETRY_ENV, RETRY_SECONDS)))
    except ValueError:
        return RETRY_SECONDS


POOL_MAX = 6  # pg_later.WRITERS writers, and reads
T = TypeVar("T")


class PgConnections:
    """A connection pool to one library database, its schema brought up to date once."""

    def __init__(self, url: str) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool, PoolClosed

        self.url = url
        self.in_flight = WritesInFlight()
        self._errors: tuple[type[BaseException], ...] = (psycopg.OperationalError,)
        self._closed: type[BaseException] = PoolClosed  # an OperationalError, not retried
        self._pool = ConnectionPool(
            url,
            kwargs=connect_kwargs(),
            min_size=1,
            max_size=POOL_MAX,
            open=False,
            check=ConnectionPool.check_connection,  # a connection the server dropped is replaced
            name="loom-library",
        )
        try:
            self._pool.open(wait=True, timeout=max(retry_seconds(), 1.0))
            self.retry(migrate)
        except Exception as err:
            self._pool.close()
            raise LoadError(URL_ENV, f"cannot use {redacted(url)}: {_why(err)}") from err

    def close(self) -> None:
        """Finish the writes in flight, close every connection and stop the pool's
        threads (a write's error is raised after that)."""
        try:
            self.in_flight.close()
        finally:
            self._pool.close()

    def flush(self) -> None:
        """Wait for every write in flight (:mod:`.pg_later`); raise the first one's error."""
        self.in_flight.wait()

    def write_later(self, path: str, operation: Callable[[Any], None]) -> None:
        """``operation`` (the write of ``path``) run through :meth:`retry` on a writer
        thread, in flight while the caller goes on (:mod:`.pg_later`)."""
        self.in_flight.submit(path, lambda: self._retried(operation))

    @contextmanager
    def connection(self) -> Iterator[Any]:
        with self._pool.connection() as conn:
            yield conn

    def retry(self, operation: Callable[[Any], T], path: str | None = None) -> T:
        """``operation(conn)`` on a pooled connection, run again on a new one after a
        connection error, until :func:`retry_seconds` have passed. It first waits for
        the write of ``path`` in flight (None: every write in flight, :mod:`.pg_later`)."""
        self.in_flight.wait(path)
        return self._retried(operation)

    def _retried(self, operation: Callable[[Any], T]) -> T:
        deadline = time.monotonic() + retry_seconds()
        pause = 0.05
        while True:
            try:
                with self._pool.connection() as conn:
                    return operation(conn)
            except self._errors as err:
                if isinstance(err, self._closed):
                    raise LoadError(
                        URL_ENV, f"{redacted(self.url)}: the library was closed"
                    ) from err
                if time.monotonic() + pause > deadline:
                    raise LoadError(URL_ENV, f"{redacted(self.url)}: {_why(err)}") from err
                time.sleep(pause * (1 + random.random()))
                pause = min(pause * 2, 2.0)


def _why(err: BaseException) -> str:
    """The first line of a driver's message (psycopg adds hints on later lines)."""
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]
