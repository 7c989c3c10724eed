"""Schema 4: a run's steps and blocks carry no foreign key to their run.

The key's trigger looked the run up for every row ``COPY`` wrote; without it nothing
cascades, so whatever replaces, forgets or deletes a run removes its rows itself, in the
same transaction. These tests fail if one of those explicit deletes is left out.
"""

from __future__ import annotations

from pathlib import Path

import psycopg

from loom_core.library.extract import RunFacts, StepText
from loom_core.library.index import Indexer
from loom_core.library.search import Library
from tests.core.team.test_pg_search_paths import FOREIGN_KEYS as KEYS
from tests.core.team.test_pg_search_paths import _answers, _index_copies

# rows of a run that is not listed (forgotten, missing, deleted): none may be left
LEFT_BEHIND = (
    "SELECT (SELECT count(*) FROM steps s WHERE NOT EXISTS "
    "(SELECT 1 FROM runs r WHERE r.id = s.run AND r.state = 'ok')), "
    "(SELECT count(*) FROM step_words w WHERE NOT EXISTS "
    "(SELECT 1 FROM runs r WHERE r.id = w.run AND r.state = 'ok')), "
    "(SELECT count(*) FROM run_words w WHERE NOT EXISTS "
    "(SELECT 1 FROM runs r WHERE r.id = w.run AND r.state = 'ok'))"
)


def _steps(count: int) -> list[StepText]:
    return [
        StepText(n, f"step {n} reads config", "read_file", "main", "ktool") for n in range(count)
    ]


def _rows(conn: psycopg.Connection, path: str) -> tuple[int, int]:
    run = conn.execute("SELECT id FROM runs WHERE path = %s", (path,)).fetchone()
    assert run is not None
    steps = conn.execute("SELECT count(*) FROM steps WHERE run = %s", run).fetchone()
    blocks = conn.execute("SELECT count(*) FROM step_words WHERE run = %s", run).fetchone()
    assert steps is not None and blocks is not None
    return int(steps[0]), int(blocks[0])


def test_replacing_forgetting_and_deleting_a_run_leaves_none_of_its_rows(pg_url: str) -> None:
    indexer = Indexer(pg_url)
    try:
        indexer.store("/runs/a.loom.json", 1, 1, RunFacts(format="trace", steps=200), _steps(200))
        indexer.store("/runs/b.loom.json", 1, 1, RunFacts(format="trace", steps=100), _steps(100))
        indexer.flush()
        with psycopg.connect(pg_url, autocommit=True) as conn:
            assert conn.execute(KEYS).fetchall() == []
            assert _rows(conn, "/runs/a.loom.json") == (200, 4)
        indexer.store("/runs/a.loom.json", 2, 2, RunFacts(format="trace", steps=70), _steps(70))
        assert indexer.forget("/runs/b.loom.json")
        indexer.flush()
        with psycopg.connect(pg_url, autocommit=True) as conn:
            assert _rows(conn, "/runs/a.loom.json") == (70, 2)  # replaced, not added to
            assert conn.execute(LEFT_BEHIND).fetchone() == (0, 0, 0)
            # rows of the forgotten run written by anything else (an older client's write
            # in flight): gone with the run when its file is gone too
            (run,) = conn.execute("SELECT id FROM runs WHERE path = '/runs/b.loom.json'").fetchone()
            conn.execute(
                "INSERT INTO steps (run, pos, body, tool, agent, tags, sample) "
                "VALUES (%s, 0, 'x', '', '', '', '')",
                (run,),
            )
            conn.execute(
                "INSERT INTO step_words (run, block, doc) VALUES (%s, 0, '''D:x''')", (run,)
            )
        indexer.db.mark_missing("/runs/b.loom.json")
        with psycopg.connect(pg_url, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM runs").fetchone() == (1,)
            assert conn.execute(LEFT_BEHIND).fetchone() == (0, 0, 0)
    finally:
        indexer.close()
    with Library(pg_url) as lib:
        assert sorted(h.seq for h in lib.search("config", 100)) == list(range(70))


def test_a_library_of_the_third_schema_drops_the_keys_on_connect(
    pg_url: str, tmp_path: Path
) -> None:
    _index_copies(pg_url, tmp_path, 2)
    with Library(pg_url) as lib:
        before = _answers(lib, 100)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # back to schema 3, steps kept
        conn.execute(
            "ALTER TABLE steps ADD CONSTRAINT steps_run_fkey FOREIGN KEY (run) "
            "REFERENCES runs (id) ON DELETE CASCADE; "
            "ALTER TABLE step_words ADD CONSTRAINT step_words_run_fkey FOREIGN KEY (run) "
            "REFERENCES runs (id) ON DELETE CASCADE; DELETE FROM loom_schema WHERE version > 3"
        )
        assert conn.execute(KEYS).fetchall() == [("step_words",), ("steps",)]
    with Library(pg_url) as lib:  # connecting applies migration 4
        assert _answers(lib, 100) == before
    with psycopg.connect(pg_url, autocommit=True) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM loom_schema ORDER BY 1")]
        assert versions == [1, 2, 3, 4] and conn.execute(KEYS).fetchall() == []
