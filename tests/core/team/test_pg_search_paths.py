"""PostgreSQL's ways to find a search's steps and runs give the same answers.

A search with words starts from the runs' summaries of words and probes the candidate
runs through their own steps, newest first, each step matched when asked from its words
as stored (schema 3: :mod:`~loom_core.library.pg_match`); a run whose summary is unknown
(NULL: indexed before the summaries existed) is a candidate of every search, and so is
every run of a query no summary can answer; a step written before schema 3 is matched on
its stored ``tsvector``. Real runs are too small to need many batches, so each way is
forced here in turn and every answer compared with the stored ``tsvector``'s, the
representation schema 2 wrote (its steps' GIN index answered on it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest

from loom_core.library import pg_read, pg_runwords, pg_steps
from loom_core.library.extract import RunFacts, StepText
from loom_core.library.index import Indexer
from loom_core.library.pg_match import step_doc, step_match
from loom_core.library.pg_runwords import PROBE_RUNS, summary_query
from loom_core.library.search import Library
from tests.core.team.test_team_library import SAMPLE

QUERIES = [
    "tool:git_push",
    "tool:read_file",
    "kind:model slugify",
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


# the steps' tsvector as schema 1 and 2 stored it (tool A, agent B, tags C, body D)
STORED_DOC = (
    "setweight(to_tsvector('simple', wtool), 'A') || setweight(to_tsvector('simple', wagent), "
    "'B') || setweight(to_tsvector('simple', tags), 'C') || "
    "setweight(to_tsvector('simple', wbody), 'D')"
)

# the foreign keys schemas 1-3 had from a run's steps and blocks to the run (schema 4: none)
FOREIGN_KEYS = (
    "SELECT conrelid::regclass::text FROM pg_constraint WHERE contype = 'f' "
    "AND conrelid::regclass::text IN ('steps', 'step_words') ORDER BY 1"
)


def _back_to_schema_2(conn: psycopg.Connection) -> None:
    """The library as schema 2 kept it: each step's tsvector stored, under a GIN index,
    no words as cut."""
    conn.execute(
        f"UPDATE steps SET doc = {STORED_DOC}; "
        "ALTER TABLE steps DROP COLUMN wtool, DROP COLUMN wagent, DROP COLUMN wbody; "
        "ALTER TABLE steps ALTER COLUMN doc SET NOT NULL; "
        "CREATE INDEX steps_doc ON steps USING gin (doc); "
        "DROP TABLE step_words; ALTER TABLE run_words DROP COLUMN blocks; "
        "ALTER TABLE steps ADD CONSTRAINT steps_run_fkey FOREIGN KEY (run) "
        "REFERENCES runs (id) ON DELETE CASCADE; DELETE FROM loom_schema WHERE version > 2"
    )


@pytest.mark.parametrize("limit", [3, 100])
def test_every_way_to_search_finds_what_the_stored_tsvector_finds(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    _index_copies(pg_url, tmp_path, 4)
    with Library(pg_url) as lib:
        probed = _answers(lib, limit)  # the summaries, then each candidate's steps
        monkeypatch.setattr(pg_runwords, "PROBE_RUNS", 1)  # one run at a time
        monkeypatch.setattr(pg_runwords, "PAGE_PROBES", 1)
        one_by_one = _answers(lib, limit)
        monkeypatch.setattr(pg_runwords, "PROBE_RUNS", PROBE_RUNS)
        monkeypatch.setattr(pg_runwords, "PAGE_PROBES", None)
        with monkeypatch.context() as m:  # every run a candidate
            m.setattr(pg_read, "summary_query", lambda step: None)
            every_run = _answers(lib, limit)
        with psycopg.connect(pg_url, autocommit=True) as conn:  # as before the summaries
            conn.execute("UPDATE run_words SET doc = NULL WHERE run % 2 = 0")
        unknown = _answers(lib, limit)
        with psycopg.connect(pg_url, autocommit=True) as conn:  # some steps as schema 2
            conn.execute(
                f"UPDATE steps SET doc = {STORED_DOC}, wtool = NULL, wagent = NULL, "
                "wbody = NULL WHERE run % 2 = 1"
            )
        some_stored = _answers(lib, limit)
        with psycopg.connect(pg_url, autocommit=True) as conn:  # every step, no blocks
            conn.execute(
                f"UPDATE steps SET doc = {STORED_DOC}, wtool = NULL, wagent = NULL, "
                "wbody = NULL WHERE doc IS NULL; UPDATE run_words SET blocks = FALSE; "
                "DELETE FROM step_words"
            )
        stored = _answers(lib, limit)
    assert all(stored.values())  # every query finds steps and runs
    hit_lists = [v for k, v in stored.items() if not k.startswith("page ")]
    assert limit > 3 or all(len(hits) == limit for hits in hit_lists)  # a limit that cuts
    for key, expected in stored.items():
        for way in (probed, one_by_one, every_run, unknown, some_stored):
            assert way[key] == expected, (
                key,
                [probed, one_by_one, every_run, unknown, some_stored].index(way),
            )


def test_a_new_library_stores_no_tsvector_per_step_and_no_index_of_them(
    pg_url: str, tmp_path: Path
) -> None:
    _index_copies(pg_url, tmp_path, 1)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        stored = conn.execute("SELECT count(*) FROM steps WHERE doc IS NOT NULL").fetchone()
        cut = conn.execute("SELECT count(*) FROM steps WHERE wbody IS NOT NULL").fetchone()
        indexes = {i for (i,) in conn.execute("SELECT indexname FROM pg_indexes")}
    assert stored == (0,) and cut[0] > 0
    assert "steps_doc" not in indexes and "run_words_doc" in indexes


def test_a_step_is_matched_on_the_columns_up_to_the_last_one_a_query_asks() -> None:
    assert "wbody" not in step_doc("'ferror':C") and "tags" in step_doc("'ferror':C")
    assert step_doc("'bash':A") == "setweight(to_tsvector('simple', s.wtool), 'A')"
    assert "wbody" in step_doc("'bash':A & 'config'")  # no weight: every column
    condition, args = step_match("'read':A <-> 'file':A & 'config' & ('a' | 'b')")
    assert args[:6] == ["read", "file", "config", "config", "config", "config"]
    assert condition.count("strpos") == 6  # a word of an '|' is not required


def test_only_the_blocks_whose_words_may_match_are_read_and_every_match_is_found(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two words in two blocks of a run (steps 10 and 200) are no match; both in step
    250 are; every block of a run written before the blocks is read."""
    body = {10: "alpha one", 200: "beta two", 250: "beta and alpha", 251: "alpha beta"}
    rows = [StepText(n, body.get(n, f"filler {n}"), "bash", "main", "ktool") for n in range(300)]
    indexer = Indexer(pg_url)
    try:
        for name in ("a", "b"):
            indexer.store(f"/runs/{name}.loom.json", 10, 1, RunFacts(format="trace"), rows)
    finally:
        indexer.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        blocks = conn.execute("SELECT count(*) FROM step_words").fetchone()
        conn.execute(  # the older run as schema 2 wrote it: no blocks
            "UPDATE run_words SET blocks = FALSE WHERE run = (SELECT min(run) FROM run_words); "
            "DELETE FROM step_words WHERE run = (SELECT min(run) FROM run_words)"
        )
    assert blocks == (10,)  # 300 steps: 5 blocks of 64 each
    with Library(pg_url) as lib:
        b, a = "/runs/b.loom.json", "/runs/a.loom.json"
        every = [(b, 250), (b, 251), (a, 250), (a, 251)]  # newest run first, each in step order
        for limit, expected in ((1, [(b, 251)]), (3, [(b, 250), (b, 251), (a, 251)]), (9, every)):
            assert [(h.path, h.seq) for h in lib.search("alpha beta", limit)] == expected
        assert [h.seq for h in lib.search('"alpha beta"')] == [251, 251]
        assert [r.path for r in lib.runs('"alpha beta"')] == [
            "/runs/b.loom.json",
            "/runs/a.loom.json",
        ]
        monkeypatch.setattr(pg_runwords, "PROBE_RUNS", 0)  # every run's blocks at once
        assert len(lib.search("alpha beta")) == 4 and len(lib.search("filler")) == 100


def test_a_word_the_parser_cuts_out_of_a_longer_one_is_still_found(pg_url: str) -> None:
    """``5e5e5`` is the lexemes ``5e5`` and ``e5``: the substring test before the parser
    keeps the step, as the stored tsvector did."""
    indexer = Indexer(pg_url)
    try:
        rows = [StepText(0, "value 5e5e5 and Config.yaml", "read_file", "main", "ktool")]
        indexer.store("/runs/a.loom.json", 10, 1, RunFacts(format="trace", steps=1), rows)
    finally:
        indexer.close()
    with Library(pg_url) as lib:
        for query in ("e5", "5e5", "config", "yaml", "tool:read_file", "5e*"):
            assert [h.seq for h in lib.search(query)] == [0], query
        assert not lib.search("tool:main") and not lib.search("e5e")


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
    assert summary_query("'a':D & !'b':D") == "'D:a'"  # the negated part left out
    assert summary_query("'a':D | !'b':D") is None
    assert summary_query("") is None


def test_a_library_of_the_first_schema_migrates_on_connect_and_answers_the_same(
    pg_url: str, tmp_path: Path
) -> None:
    _index_copies(pg_url, tmp_path, 3)
    with Library(pg_url) as lib:
        before = _answers(lib, 100)
    with psycopg.connect(pg_url, autocommit=True) as conn:  # back to schema 1, steps kept
        _back_to_schema_2(conn)
        conn.execute(
            "DROP TABLE run_words; DELETE FROM loom_schema WHERE version > 1; "
            "CREATE INDEX steps_tool ON steps USING gin (tool gin_trgm_ops); "
            "CREATE INDEX steps_agent ON steps USING gin (agent gin_trgm_ops)"
        )
    with Library(pg_url) as lib:  # connecting applies migrations 2, 3 and 4
        assert _answers(lib, 100) == before
    with psycopg.connect(pg_url, autocommit=True) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM loom_schema ORDER BY 1")]
        unknown = conn.execute("SELECT count(*) FROM run_words WHERE doc IS NULL").fetchone()
        indexes = {i for (i,) in conn.execute("SELECT indexname FROM pg_indexes")}
        assert not conn.execute(FOREIGN_KEYS).fetchall()
    assert versions == [1, 2, 3, 4] and unknown == (3,)  # every run a candidate until re-indexed
    assert not {"steps_tool", "steps_agent", "steps_doc"} & indexes and "runs_models" in indexes
    indexer = Indexer(pg_url)
    try:  # the next pass reads the runs without a summary again, then they are unchanged
        first = indexer.index_folder(tmp_path)
        again = indexer.index_folder(tmp_path)
    finally:
        indexer.close()
    assert len(first.indexed) == 3 and not again.indexed
    with psycopg.connect(pg_url, autocommit=True) as conn:
        unknown = conn.execute("SELECT count(*) FROM run_words WHERE doc IS NULL").fetchone()
        stored = conn.execute("SELECT count(*) FROM steps WHERE doc IS NOT NULL").fetchone()
    assert unknown == (0,) and stored == (0,)  # read again: words as cut, no tsvector
    with Library(pg_url) as lib:
        assert _answers(lib, 100) == before


def test_a_library_of_the_second_schema_migrates_and_keeps_its_steps(
    pg_url: str, tmp_path: Path
) -> None:
    """Schema 2's steps hold their tsvector and its runs their summaries: nothing is read
    again, and every search answers on the stored tsvector as it did."""
    _index_copies(pg_url, tmp_path, 2)
    with Library(pg_url) as lib:
        before = _answers(lib, 100)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        _back_to_schema_2(conn)
    with Library(pg_url) as lib:  # connecting applies migrations 3 and 4
        assert _answers(lib, 100) == before
    indexer = Indexer(pg_url)
    try:
        assert not indexer.index_folder(tmp_path).indexed
    finally:
        indexer.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM loom_schema ORDER BY 1")]
        stored = conn.execute("SELECT count(*) FROM steps WHERE doc IS NULL").fetchone()
        indexes = {i for (i,) in conn.execute("SELECT indexname FROM pg_indexes")}
        assert not conn.execute(FOREIGN_KEYS).fetchall()
    assert versions == [1, 2, 3, 4] and stored == (0,) and "steps_doc" not in indexes


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
