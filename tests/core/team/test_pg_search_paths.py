"""PostgreSQL's two ways to find a search's steps give the same hits.

A search matching few steps takes every match from the GIN index and sorts their keys; one
matching very many probes the newest runs one by one and stops at the limit
(:meth:`~loom_core.library.pg_read.PgReads.hits`). Real runs are too small to reach the
bound, so it is moved here to force each way in turn.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loom_core.library import pg_read
from loom_core.library.index import Indexer
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


@pytest.mark.parametrize("limit", [3, 100])
def test_probing_the_newest_runs_finds_what_the_index_finds(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    for n in range(4):
        shutil.copy(SAMPLE, tmp_path / f"run-{n}.loom.json")
    indexer = Indexer(pg_url)
    try:
        indexer.index_folder(tmp_path)
    finally:
        indexer.close()
    with Library(pg_url) as lib:
        by_index = {q: lib.search(q, limit) for q in QUERIES}
        monkeypatch.setattr(pg_read, "COMMON_STEPS", 0)
        monkeypatch.setattr(pg_read, "COMMON_PER_RUN", 0)
        probed = {q: lib.search(q, limit) for q in QUERIES}
    assert all(by_index.values())  # every query finds steps
    assert limit > 3 or all(len(hits) == limit for hits in by_index.values())  # a limit that cuts
    for query in QUERIES:
        assert [(h.path, h.seq, h.snippet) for h in probed[query]] == [
            (h.path, h.seq, h.snippet) for h in by_index[query]
        ], query
