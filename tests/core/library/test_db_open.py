"""Several connections opening a new library at the same moment all get it (the window's
indexer and its Runs list do; one first open in ten, three at once, failed with "database is
locked" while switching the file to write-ahead logging, and the library stopped)."""

from __future__ import annotations

import threading
from pathlib import Path

from loom_core.library.db import SCHEMA_VERSION, connect, schema_version

ROUNDS, OPENERS = 40, 3


def _open_together(path: Path) -> list[str]:
    start = threading.Barrier(OPENERS, timeout=30)
    errors: list[str] = []

    def opener() -> None:
        start.wait()
        try:
            conn = connect(path)
        except Exception as err:  # noqa: BLE001 - every failure is the finding
            errors.append(repr(err))
            return
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if mode != "wal" or schema_version(conn) != SCHEMA_VERSION:
                errors.append(f"mode {mode}, schema {schema_version(conn)}")
        finally:
            conn.close()

    threads = [threading.Thread(target=opener) for _ in range(OPENERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


def test_connections_opening_a_new_library_at_once_all_get_it(tmp_path: Path) -> None:
    failures = {n: _open_together(tmp_path / f"{n}.sqlite3") for n in range(ROUNDS)}
    assert {n: errors for n, errors in failures.items() if errors} == {}
