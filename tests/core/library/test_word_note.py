"""A hit's count and its tab's filter: why they differ, on both backends.

A search for "error" found one step of the sample (the test run's FileNotFoundError);
opening the hit carried "error" into the tab's filter, which showed six steps: the filter
matches text anywhere in a step (``errors='ignore'``, ``AssertionError``), the library
whole words. Both backends cut words alike and find the same step; the filter shows it
among its six, and the app says why the two differ (:func:`word_note`).
"""

from __future__ import annotations

from pathlib import Path

from loom_core.formats.loader import load
from loom_core.library.index import Indexer
from loom_core.library.query import word_note
from loom_core.library.search import Library
from loom_core.views.filtering import filter_steps
from loom_core.views.steps import step_seq
from loom_core.views.timeline import build_timeline


def test_the_search_finds_whole_words_and_the_filter_substrings(runs: Path) -> None:
    sample = runs / "sample.loom.json"
    indexer = Indexer()
    try:
        indexer.index_file(sample)
    finally:
        indexer.close()
    with Library() as lib:
        found = [h.seq for h in lib.search("error") if Path(h.path).name == sample.name]
    tl = build_timeline(load(sample))
    shown = [step_seq(tl, row) for row in filter_steps(tl, "error") or []]
    assert found == [4] and shown == [4, 6, 8, 10, 16, 19]
    assert set(found) <= set(shown)  # the hit's step is among the filter's
    note = word_note("error")
    assert "“error” as whole words" in note and "inside longer words" in note


def test_no_note_where_search_and_filter_mean_the_same() -> None:
    assert word_note("") == ""
    assert word_note("tool:run_tests is:error") == ""  # keys: the same steps in both
    assert "“rm -rf”" in word_note('tool:bash "rm -rf"')
