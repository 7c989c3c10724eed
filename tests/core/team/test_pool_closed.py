"""A closed library is not a dropped connection: an operation that asks it afterwards (a
task still running while the window switches library or closes) fails at once instead
of retrying for two minutes on a worker thread."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from loom_core.errors import LoadError
from loom_core.library import pg_conn
from loom_core.library.pg_conn import RETRY_ENV, PgConnections


def test_an_operation_on_a_closed_library_fails_at_once_without_retrying(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RETRY_ENV, "1")  # (a retrying build fails in a second, not two minutes)
    pauses: list[float] = []
    monkeypatch.setattr(
        pg_conn, "time", SimpleNamespace(monotonic=time.monotonic, sleep=pauses.append)
    )
    db = PgConnections(pg_url)
    db.close()
    with pytest.raises(LoadError, match="the library was closed"):
        db.retry(lambda conn: conn.execute("SELECT 1"))
    assert pauses == []
