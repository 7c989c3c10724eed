"""Real servers for the team library: one PostgreSQL cluster and one S3 API per test worker
(a pytest plugin, loaded by tests/conftest.py).

Started once per session (a cluster takes seconds on a busy machine) and stopped at its
end; each test gets its own database and bucket, so tests share no state. Where a server
cannot start here the tests that need it skip, saying why (CI installs both).
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.servers.postgres import PgServer, find_binaries
from tests.servers.s3 import S3Server, stop_fsspec_io

if TYPE_CHECKING:
    from loom_core.library.pg_conn import PgConnections

_names = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    bindir, why = find_binaries()
    if bindir is None:
        pytest.skip(f"no PostgreSQL server here: {why}")
    # not under pytest's temp dir: the server may run as another user (root's is private)
    root = Path(tempfile.mkdtemp(prefix="loom-pg-"))
    root.chmod(0o755)
    server = PgServer(bindir, root / "cluster")
    try:
        server.start()
    except Exception as err:  # the reason, not a traceback of someone else's tool
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"PostgreSQL did not start: {err}")
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def _pg_pools() -> Iterator[list[PgConnections]]:
    """The connection pools the test opened on its database (:func:`pg_url` records them),
    closed after it. Why: a test that leaves an ``Indexer`` or a ``Library`` open would
    leave the pool's threads running, and the garbage collector would later close it from
    one of them (psycopg_pool cannot join the thread it runs on: an error in whichever
    test runs then). Why autouse: set up first, so torn down after every other fixture of
    the test, after its window is closed and its tasks ended (a pool closed under a
    running task makes it fail)."""
    opened: list[PgConnections] = []
    yield opened
    for db in opened:
        db.close()


@pytest.fixture
def pg_url(
    pg_server: PgServer, monkeypatch: pytest.MonkeyPatch, _pg_pools: list[PgConnections]
) -> str:
    """A new database for this test; PGPASSFILE holds the role's password, as for a user.
    Every pool opened while it is in use is closed after the test (:func:`_pg_pools`)."""
    from loom_core.library.pg_conn import PgConnections

    real_init = PgConnections.__init__

    def init(self: PgConnections, url: str) -> None:
        real_init(self, url)
        _pg_pools.append(self)

    monkeypatch.setattr(PgConnections, "__init__", init)
    monkeypatch.setenv("PGPASSFILE", str(pg_server.passfile))
    return pg_server.create_database(f"t{os.getpid()}_{next(_names)}")


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    server = S3Server()
    try:
        server.start()
    except Exception as err:
        pytest.skip(f"moto's S3 server did not start: {err}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A new bucket, the AWS chain's environment pointing at the test server."""
    for key, value in s3_server.env().items():
        monkeypatch.setenv(key, value)
    yield s3_server.make_bucket(f"runs-{os.getpid()}-{next(_names)}")
    stop_fsspec_io()  # no thread outlives the test (see stop_fsspec_io)
