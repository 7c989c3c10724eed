"""Search across runs in the step filter's syntax, each hit with its step and the match marked.

Why on the bundled sample: it has every feature a query can name -- tool calls with
arguments, an ``ERROR:`` result, a ``BLOCKED:`` result, a shield denial of
``run_shell(rm -rf …)``, a reviewer sub-agent, two user prompts -- and its steps are
known, so each case checks the exact steps found.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from loom_core.errors import LoadError
from loom_core.library.index import Indexer
from loom_core.library.query import parse_search
from loom_core.library.rows import Hit, split_marks
from loom_core.library.search import Library
from tests.core.library.conftest import SAMPLE


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    db = tmp_path_factory.mktemp("search") / "library.sqlite3"
    indexer = Indexer(db)
    indexer.index_file(SAMPLE)
    indexer.close()
    library = Library(db)
    yield library
    library.close()


def seqs(hits: list[Hit]) -> list[int | None]:
    return sorted(h.seq for h in hits if h.seq is not None)


def test_a_tool_argument_is_found_at_the_step_that_made_the_call(lib: Library) -> None:
    hits = lib.search('tool:run_shell "git log"')
    assert seqs(hits) == [23]
    assert '"command": "[git log]' in hits[0].marked()
    assert hits[0].path == str(SAMPLE) and hits[0].tool == "run_shell"


def test_the_shield_denial_sits_on_its_model_step(lib: Library) -> None:
    hits = lib.search('tool:run_shell "rm -rf"')
    assert seqs(hits) == [12]
    assert "[rm -rf]" in hits[0].marked()
    assert seqs(lib.search("is:shield")) == [12]
    assert seqs(lib.search("is:denied")) == [12]


def test_flags_mean_what_they_mean_in_the_step_filter(lib: Library) -> None:
    assert seqs(lib.search("is:error", limit=50)) == [3, 4, 12, 20, 21]
    assert seqs(lib.search("is:blocked", limit=50)) == [12, 20, 21]
    assert seqs(lib.search("is:subagent", limit=50)) == [15, 16, 17, 18, 19]
    assert seqs(lib.search("agent:reviewer approve")) == [19]
    assert seqs(lib.search("kind:tool FileNotFoundError")) == [4]


def test_words_phrases_and_prefixes(lib: Library) -> None:
    assert seqs(lib.search('"standard way"')) == [19]
    assert lib.search('"way standard"') == []
    assert 19 in seqs(lib.search("transliterate", limit=50))
    assert lib.search("translit") == []  # whole words, unless asked for beginnings
    assert 19 in seqs(lib.search("translit*", limit=50))
    prompt = lib.search('"only start failing"')
    assert [h.seq for h in prompt] == [None]  # a user prompt: the run's start
    assert prompt[0].marked("«", "»").count("«only start failing»") == 1


def test_tool_globs_are_checked_name_by_name(lib: Library) -> None:
    assert seqs(lib.search("tool:*_file", limit=50)) == [7, 8, 9, 10, 11, 15, 16]
    assert seqs(lib.search("tool:run_*", limit=50)) == seqs(lib.search("tool:run", limit=50))
    assert seqs(lib.search("tool:git_push")) == [20, 21]


def test_a_glob_is_narrowed_by_its_whole_words_and_checking_is_bounded(
    lib: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_core.library import sqlite_runs

    assert parse_search("tool:*_nothing").match == 'tool : ("nothing")'  # no scan of every step
    assert parse_search("tool:re?d_file").match == 'tool : (("re"* AND "file"))'
    assert parse_search("tool:*sh").match == 'tags : ("ktool" OR "kmodel")'  # only names can tell
    assert lib.search("tool:*_nothing") == []
    assert seqs(lib.search("tool:*sh", limit=50)) == [20, 21]  # git_push
    monkeypatch.setattr(sqlite_runs, "EXAMINED", 3)  # a glob the index cannot narrow stops early
    assert len(lib.search("tool:*_file", limit=50)) == 3


def test_run_keys_filter_by_model_and_date(lib: Library) -> None:
    assert seqs(lib.search("model:sonnet slugify", limit=100))
    assert lib.search("model:gpt slugify") == []
    assert lib.search("after:2000-01-01 slugify") and not lib.search("before:2000-01-01 slugify")
    assert not lib.search("after:2999-01-01T00:00 slugify")
    only_runs = lib.search("model:sonnet")
    assert [(h.path, h.seq) for h in only_runs] == [(str(SAMPLE), None)]


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("kind:modle", "no kind “modle”"),
        ("after:yesterday", "after: needs a date"),
        ("before:", "before: needs a value"),
        ("is:wrong", "no such flag is:wrong"),
        ("colour:red x", "unknown key “colour:”"),
    ],
)
def test_a_query_with_a_problem_names_it(lib: Library, query: str, said: str) -> None:
    with pytest.raises(LoadError) as err:
        lib.search(query)
    assert said in err.value.cause and query in err.value.path
    assert parse_search(query).problems


def test_the_runs_list_takes_the_same_query(lib: Library) -> None:
    assert [r.path for r in lib.runs("tool:git_push")] == [str(SAMPLE)]
    assert lib.runs("tool:no_such_tool") == [] and lib.runs("model:gpt") == []
    assert [r.path for r in lib.runs(sort="cost", descending=False)] == [str(SAMPLE)]
    with pytest.raises(LoadError):
        lib.runs(sort="colour")


def test_marks_are_spans_of_the_plain_snippet() -> None:
    text, marks = split_marks("a \x02bc\x03 d \x02e\x03")
    assert text == "a bc d e" and marks == ((2, 4), (7, 8))
    hit = Hit("p", 1, text, marks, "", "", 1)
    assert hit.marked() == "a [bc] d [e]"
