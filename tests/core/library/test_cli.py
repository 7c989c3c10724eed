"""``python -m loom_core runs list|search|index|forget``: output, JSON and exit codes.

Why subprocesses: the contract is the real entry point's exit code and its one stderr
line for bad input (a bad query, a folder that does not exist), with no traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.clis import core


def ok(*args: str | Path) -> str:
    done = core("runs", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_index_then_list_and_search(runs: Path) -> None:
    (runs / "broken.loom.json").write_text("{not json")
    first = json.loads(ok("index", runs, "--json"))
    assert (first["indexed"], first["unreadable"]) == (3, 1)
    assert first["unreadable_files"][0]["path"] == str(runs / "broken.loom.json")
    assert ok("index", runs).startswith("0 indexed, 4 unchanged")
    listed = json.loads(ok("list", "--json"))
    assert {Path(r["path"]).name for r in listed} >= {"sample.loom.json", "broken.loom.json"}
    assert "unreadable: not valid JSON" in ok("list")
    hits = json.loads(ok("search", 'tool:run_shell "git log"', "--json"))
    assert [(Path(h["path"]).name, h["seq"]) for h in hits] == [("sample.loom.json", 23)]
    assert (
        ok("search", "tool:git_push")
        .splitlines()[0]
        .startswith(f"{runs / 'sample.loom.json'}:20  git_push")
    )
    assert ok("forget", runs / "broken.loom.json") == ""
    assert "broken" not in ok("list")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("search", "kind:modle"), "no kind “modle”"),
        (("search", "  "), "nothing to search for"),
        (("list", "after:someday"), "after: needs a date"),
        (("index", "/no/such/folder"), "/no/such/folder: no such file or folder"),
        (("forget", "/no/such/run.loom.json"), "not in the run library"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: tuple[str, ...], said: str) -> None:
    done = core("runs", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    assert done.stderr.startswith("error: ")


def test_library_flag_names_another_database(tmp_path: Path, library_db: Path) -> None:
    other = tmp_path / "other.sqlite3"
    assert ok("--library", other, "index", Path(__file__).resolve().parents[3] / "resources")
    assert "sample.loom.json" in ok("--library", other, "list")
    assert ok("list") == "" and other.exists()


def test_a_search_without_a_hit_says_so_and_exits_1_like_grep(runs: Path) -> None:
    ok("index", runs)
    done = core("runs", "search", "zebra-that-no-run-holds")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "no run matches zebra-that-no-run-holds\n"
    as_json = core("runs", "search", "zebra-that-no-run-holds", "--json")
    assert (as_json.returncode, json.loads(as_json.stdout)) == (1, [])


def test_the_cost_column_says_what_the_app_says(runs: Path, tmp_path: Path) -> None:
    """``$0 offline`` for a run an offline model answered, ``?`` for an unpriced model."""
    from tests.core.harness_runs import journal_complete

    offline, _run = journal_complete(runs)
    ok("index", runs)
    lines = {Path(line.split()[-1]).name: line for line in ok("list").splitlines()}
    assert " $0 offline  scripted  " in lines[offline.name]
    assert " ?  claude-test  " in lines["session.loom.json"]  # the fake upstream's model
    assert " $0.1302  claude-sonnet-4-5  " in lines["sample.loom.json"]
