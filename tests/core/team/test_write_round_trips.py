"""A run's write to the team library asks the server nothing on the indexer's thread
(loom_core/library/pg_write.py, pg_runtext.py): its rows are made there without the run's
id, which the write puts in; new ids come in batches; the outcome is decided from what the
write itself reads of the app's notes. Nothing here is timed: the questions are counted."""

from __future__ import annotations

import threading
from contextlib import closing
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom_core.library.extract import RunFacts, StepText
from loom_core.library.index import Indexer
from loom_core.library.pg_conn import PgConnections
from loom_core.library.pg_rows import copy_text, escape_column, with_run
from loom_core.library.pg_write import IDS_AHEAD
from loom_core.library.search import Library


@given(st.lists(st.lists(st.text(alphabet="a\n\t\\\r", max_size=4), min_size=2, max_size=2)))
@settings(max_examples=40)
def test_the_run_id_goes_in_front_of_every_line_whatever_the_values_hold(
    rows: list[list[str]],
) -> None:
    columns = [escape_column([r[0] for r in rows]), escape_column([r[1] for r in rows])]
    made = with_run(copy_text(columns), 12)
    assert made == copy_text([["12"] * len(rows), *columns])


def _steps(word: str) -> list[StepText]:
    return [StepText(n, f"step {n} about {word}", "bash", "main", "ktool") for n in range(3)]


def test_storing_runs_asks_the_server_only_for_a_batch_of_ids_on_the_callers_thread(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    real = PgConnections.retry

    def counted(self: PgConnections, operation: Any, path: str | None = None) -> Any:
        asked.append(threading.current_thread().name)
        return real(self, operation, path)

    monkeypatch.setattr(PgConnections, "retry", counted)
    with closing(Indexer(pg_url)) as indexer:
        asked.clear()  # opening the library asks its own questions
        for n in range(IDS_AHEAD + 4):
            indexer.store(
                f"/runs/{n:02d}.loom.json", 1, n + 1, RunFacts(format="trace"), _steps(f"w{n}")
            )
        assert asked == [threading.current_thread().name] * 2  # two batches of ids
        indexer.flush()
    with psycopg.connect(pg_url) as conn:
        ids = [i for (i,) in conn.execute("SELECT id FROM runs ORDER BY path").fetchall()]
    assert ids == sorted(ids) and len(ids) == IDS_AHEAD + 4  # hand-in order


def test_a_run_stored_again_keeps_its_id_and_is_replaced_whole(pg_url: str) -> None:
    with closing(Indexer(pg_url)) as indexer:
        indexer.store("/runs/a.loom.json", 1, 1, RunFacts(format="trace"), _steps("alpha"))
        indexer.store("/runs/b.loom.json", 1, 1, RunFacts(format="trace"), _steps("beta"))
        indexer.flush()
        with psycopg.connect(pg_url) as conn:
            first = conn.execute("SELECT id FROM runs WHERE path = '/runs/a.loom.json'").fetchone()
        indexer.store("/runs/a.loom.json", 2, 2, RunFacts(format="trace"), _steps("gamma"))
        indexer.flush()
    with psycopg.connect(pg_url) as conn:
        again = conn.execute("SELECT id FROM runs WHERE path = '/runs/a.loom.json'").fetchone()
        steps = conn.execute("SELECT count(*) FROM steps WHERE run = %s", first).fetchone()
    assert again == first and steps == (3,)
    with Library(pg_url) as lib:
        assert {h.path for h in lib.search("gamma")} == {"/runs/a.loom.json"}
        assert lib.search("alpha") == []


def test_what_the_app_noted_before_the_write_decides_the_outcome(pg_url: str) -> None:
    with closing(Indexer(pg_url)) as indexer:
        indexer.db.note("/runs/a.loom.json", "opened", False, "the agent crashed")
        indexer.store("/runs/a.loom.json", 1, 1, RunFacts(format="trace"), _steps("alpha"))
        indexer.flush()
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT outcome, why FROM runs").fetchone()
    assert row is not None and row[0] == "failed" and "the agent crashed" in row[1]
