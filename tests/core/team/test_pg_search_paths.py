"""PostgreSQL's ways to find a search's steps and runs give the same answers.

A search with words starts from the runs' summaries of words and probes the candidate
runs through their own steps, newest first; past a bound it asks the steps' GIN index for
the rest; a run whose summary is unknown (NULL: indexed before the summaries existed) is
a candidate of every search; a query no summary can answer asks the steps' index alone
(:meth:`~loom_core.library.pg_read.PgReads.hits`, :mod:`~loom_core.library.pg_runwords`).
Real runs are too small to reach the bound, so each way is forced here in turn and every
answer compared with the steps' index's own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest

from loom_core.library import pg_read, pg_runwords, pg_steps
from loom_core.library.index import Indexer
from loom_core.library.pg_runwords import PROBE_RUNS, summary_query
from loom_core.library.search import Library
from tests.core.team.test_team_library import SAMPLE

QUERIES = [
    "tool:git_push",
    "slugify",
    "is:error",
    'tool:run_tests "test session"',
    "transl*",
    "kind:tool pytest",
]


def _index_copies(pg_url: str, folder: Path, count: int) -> None:
    """``count`` copies of the sample run indexed: runs that differ only in their age."""
    for n in range(count):
        shutil.copy(SAMPLE, folder / f"run-{n}.loom.json")
    indexer = Indexer(pg_url)
    try:
        indexer.index_folder(folder)
    finally:
        indexer.close()


def _answers(lib: Library, limit: int) -> dict[str, object]:
    hits = {q: [(h.path, h.seq, h.snippet, h.marks) for h in lib.search(q, limit)] for q in QUERIES}
    pages = {f"page {q}": [r.path for r in lib.runs(q, limit=limit)] for q in QUERIES}
    return {**hits, **pages}


@pytest.mark.parametrize("limit", [3, 100])
def test_every_way_to_search_finds_what_the_steps_index_finds(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    _index_copies(pg_url, tmp_path, 4)
    with Library(pg_url) as lib:
        probed = _answers(lib, limit)  # the summaries, then each candidate's steps
        monkeypatch.setattr(pg_runwords, "PROBE_RUNS", 1)  # the newest run, then the index
        monkeypatch.setattr(pg_runwords, "PAGE_PROBES", 1)
        past_bound = _answers(lib, limit)
        monkeypatch.setattr(pg_runwords, "PROBE_RUNS", PROBE_RUNS)
        monkeypatch.setattr(pg_runwords, "PAGE_PROBES", None)
        with psycopg.connect(pg_url, autocommit=True) as conn:  # as before the summaries
            conn.execute("UPDATE run_words SET doc = NULL WHERE run % 2 = 0")
        unknown = _answers(lib, limit)
        monkeypatch.setattr(pg_read, "summary_query", lambda step: None)  # the steps' index
        by_index = _answers(lib, limit)
    assert all(by_index.values())  # every query finds steps and runs
    hit_lists = [v for k, v in by_index.items() if not k.startswith("page ")]
    assert limit > 3 or all(len(hits) == limit for hits in hit_lists)  # a limit that cuts
    for key, expected in by_index.items():
        assert probed[key] == expected, key
        assert past_bound[key] == expected, key
        assert unknown[key] == expected, key


def test_a_summary_query_keeps_each_weight_and_loosens_phrases() -> None:
    assert summary_query("'read':A & 'file':A & 'config':AD") == (
        "'A:read' & 'A:file' & ('A:config' | 'D:config')"
    )
    assert summary_query("'conf':*AD | 'a' <-> 'b' <2> 'c'") == (
        "('A:conf':* | 'D:conf':*) | ('A:a' | 'B:a' | 'C:a' | 'D:a') & "
        "('A:b' | 'B:b' | 'C:b' | 'D:b') & ('A:c' | 'B:c' | 'C:c' | 'D:c')"
    )
    assert summary_query("'it''s':D") == "'D:it''s'"
    assert summary_query("!'a':D") is None  # a negation is not a summary's question
    assert summary_query("") is None


def test_a_library_of_the_first_schema_migrates_on_connect_and_answers_the_same(
    pg_url: str, tmp_path: Path
) -> None:
    _index_copies(pg_url, tmp_path, 3)
    with Library(pg_url) as lib:
        before = _answers(lib, 100)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # back to schema 1, steps kept
        conn.execute(
            "DROP TABLE run_words; DELETE FROM loom_schema WHERE version > 1; "
            "CREATE INDEX steps_tool ON steps USING gin (tool gin_trgm_ops); "
            "CREATE INDEX steps_agent ON steps USING gin (agent gin_trgm_ops)"
        )
    with Library(pg_url) as lib:  # connecting applies migration 2
        assert _answers(lib, 100) == before
    with psycopg.connect(pg_url, autocommit=True) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM loom_schema ORDER BY 1")]
        unknown = conn.execute("SELECT count(*) FROM run_words WHERE doc IS NULL").fetchone()
        indexes = {i for (i,) in conn.execute("SELECT indexname FROM pg_indexes")}
    assert versions == [1, 2] and unknown == (3,)  # every run a candidate until re-indexed
    assert not {"steps_tool", "steps_agent"} & indexes and "runs_models" in indexes
    indexer = Indexer(pg_url)
    try:  # the next pass reads the runs without a summary again, then they are unchanged
        first = indexer.index_folder(tmp_path)
        again = indexer.index_folder(tmp_path)
    finally:
        indexer.close()
    assert len(first.indexed) == 3 and not again.indexed
    with psycopg.connect(pg_url, autocommit=True) as conn:
        unknown = conn.execute("SELECT count(*) FROM run_words WHERE doc IS NULL").fetchone()
    assert unknown == (0,)
    with Library(pg_url) as lib:
        assert _answers(lib, 100) == before


def test_a_run_whose_words_a_tsvector_cannot_hold_is_a_candidate_of_every_search(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(SAMPLE, tmp_path / "big.loom.json")
    monkeypatch.setattr(pg_steps, "SUMMARY_BYTES", 10)
    indexer = Indexer(pg_url)
    try:
        indexer.index_folder(tmp_path)
    finally:
        indexer.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT doc::text FROM run_words").fetchall() == [("'all'",)]
    with Library(pg_url) as lib:
        assert lib.search("slugify") and lib.runs("slugify")
        assert not lib.search("nosuchwordanywhere") and not lib.runs("nosuchwordanywhere")
    indexer = Indexer(pg_url)
    try:  # a summary too big is known: the run is not read again on every pass
        assert not indexer.index_folder(tmp_path).indexed
    finally:
        indexer.close()
