"""Indexing real runs: every format through the loader, incrementally, and what goes wrong.

Why these cases: the library is re-scanned at every start and on every change, so an
unchanged file must not be read again; files move, vanish and break between scans, and
the Runs page must show that instead of failing; and an index of an older schema must
rebuild itself rather than be misread.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from loom_core.library.db import SCHEMA_VERSION, connect, schema_version
from loom_core.library.index import Indexer
from loom_core.library.search import Library
from tests.core.library.conftest import sqlite_only


def _index(folder: Path) -> tuple[Indexer, Library]:
    indexer = Indexer()
    indexer.index_folder(folder)
    return indexer, Library()


def test_every_run_in_a_folder_is_listed_with_its_facts(runs: Path, made: Path) -> None:
    indexer, lib = _index(runs)
    rows = {Path(r.path).name: r for r in lib.runs()}
    assert set(rows) == {"sample.loom.json", "sample-branch.loom.json", "session.loom.json"}
    sample, branch, proxy = (
        rows["sample.loom.json"],
        rows["sample-branch.loom.json"],
        rows["session.loom.json"],
    )
    assert (sample.format, sample.steps, sample.outcome, sample.state) == (
        "trace",
        28,
        "finished",
        "ok",
    )
    assert sample.models == ("claude-sonnet-4-5",) and sample.tokens_in == 35693
    assert sample.cost is not None and sample.cost > 0 and sample.errors > 0
    assert sample.title.startswith("CI for textkit is red")
    assert branch.parent == str(made / "sample.loom.json") and branch.fork_seq == 3
    assert branch.started is not None  # the fork's created_at
    assert proxy.models == ("claude-test",) and proxy.tokens_in >= 120  # the scripted usage
    assert [b.path for b in lib.branches(made / "sample.loom.json")] == [branch.path]
    indexer.close()
    lib.close()


def test_a_second_pass_reads_only_changed_files(runs: Path) -> None:
    indexer, lib = _index(runs)
    again = indexer.index_folder(runs)
    assert again.indexed == [] and len(again.unchanged) == 3
    branch = runs / "sample-branch.loom.json"
    st = branch.stat()
    os.utime(branch, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    third = indexer.index_folder(runs)
    assert third.indexed == [str(branch)] and len(third.unchanged) == 2
    indexer.close()


def test_moved_deleted_and_unreadable_files_are_marked_not_fatal(runs: Path) -> None:
    indexer, lib = _index(runs)
    sample, branch = runs / "sample.loom.json", runs / "sample-branch.loom.json"
    moved = runs / "elsewhere" / "sample.loom.json"
    moved.parent.mkdir()
    shutil.move(sample, moved)  # keeps the mtime: recognised as the same run
    os.remove(runs / "proxy" / "session.loom.json")
    os.remove(runs / "proxy" / "session.journal.jsonl")
    branch.write_text('{"version": 2, "log": [')  # torn
    report = indexer.index_folder(runs)
    assert report.indexed == [str(moved)] and report.unreadable == [str(branch)]
    by_path = {r.path: r for r in lib.runs()}
    assert by_path[str(sample)].state == "missing"
    assert by_path[str(sample)].cause == f"moved to {moved}"
    gone = by_path[str(runs / "proxy" / "session.loom.json")]
    assert (gone.state, gone.cause) == ("missing", "the file is gone")
    broken = by_path[str(branch)]
    assert broken.state == "unreadable" and "JSON" in broken.cause
    assert report.causes[str(branch)] == broken.cause
    assert all(h.path == str(moved) for h in lib.search("slugify"))  # only readable runs
    assert indexer.index_file(branch) == "unchanged"  # a broken file is not re-read either
    indexer.close()


def test_a_file_that_cannot_be_read_is_marked_with_the_cause(runs: Path) -> None:
    indexer, lib = _index(runs)
    sample = runs / "sample.loom.json"
    if os.geteuid() != 0:  # root reads anything: there, a folder in the file's place stands in
        sample.chmod(0)
        st = sample.stat()
        os.utime(sample, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert indexer.index_file(sample) == "unreadable"
        assert lib.run(sample).cause == "permission denied"  # type: ignore[union-attr]
        sample.chmod(0o644)
    sample.unlink()
    sample.mkdir()  # a folder where the run was
    assert indexer.index_file(sample) == "unreadable"
    assert lib.run(sample).cause == "is a directory, not a file"  # type: ignore[union-attr]
    indexer.close()


def test_a_journal_beside_its_trace_and_the_sidecar_are_one_run(runs: Path) -> None:
    indexer, lib = _index(runs)
    proxy = [r for r in lib.runs() if "/proxy/" in r.path]
    assert [Path(r.path).name for r in proxy] == ["session.loom.json"]
    os.remove(runs / "proxy" / "session.loom.json")  # a crashed recording: its journal remains
    indexer.index_folder(runs)
    names = sorted(Path(r.path).name for r in lib.runs() if "/proxy/" in r.path and r.state == "ok")
    assert names == ["session.journal.jsonl"]
    indexer.close()


def test_a_journal_listed_before_its_trace_was_written_gives_way_to_it(runs: Path) -> None:
    """A proxy writes its journal first and its trace later: a folder indexed in between
    lists the journal; once the trace is there, the run is listed once, as its trace (the
    Runs page listed every demo twice, demo-N.loom.json and demo-N.journal.jsonl)."""
    trace = runs / "proxy" / "session.loom.json"
    kept = trace.read_bytes()
    trace.unlink()
    indexer, lib = _index(runs)
    assert [Path(r.path).name for r in lib.runs() if "/proxy/" in r.path] == [
        "session.journal.jsonl"
    ]
    trace.write_bytes(kept)
    indexer.index_folder(runs)
    assert [Path(r.path).name for r in lib.runs() if "/proxy/" in r.path] == ["session.loom.json"]
    journal = str(runs / "proxy" / "session.journal.jsonl")
    assert indexer.index_file(journal) == "unchanged" and lib.run(journal) is None  # one by one
    indexer.close()


def test_a_database_of_another_schema_is_rebuilt_keeping_its_paths(
    runs: Path, library_db: Path, backend: str
) -> None:
    sqlite_only(backend)
    indexer, lib = _index(runs)
    indexer.close()
    lib.close()
    conn = connect()
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    conn.execute("UPDATE runs SET title = 'stale'")
    conn.close()
    conn = connect()
    assert schema_version(conn) == SCHEMA_VERSION
    rows = conn.execute("SELECT path, size, title FROM runs").fetchall()
    assert len(rows) == 3 and all(size is None and title == "" for _p, size, title in rows)
    conn.close()
    report = Indexer().refresh()  # the paths it knew are read again
    assert len(report.indexed) == 3


def test_a_file_that_is_not_a_database_is_set_aside(library_db: Path, backend: str) -> None:
    sqlite_only(backend)
    library_db.write_bytes(b"this is not sqlite " * 100)
    with Library() as lib:
        assert lib.count() == 0
    assert library_db.with_name(library_db.name + ".damaged").exists()


def test_noted_runs_carry_their_source_and_recording_is_running(runs: Path) -> None:
    """A run the app records is running while nothing says otherwise; this recording's
    proxy ended its session (its sidecar's end record), so the app's word is stale (an
    app that died while recording leaves it behind) and its file decides: finished."""
    indexer = Indexer()
    sample = runs / "sample.loom.json"
    assert indexer.note(sample, "opened") == "indexed"
    lib = Library()
    assert lib.run(sample).source == "opened"  # type: ignore[union-attr]
    indexer.note(runs / "proxy" / "session.loom.json", "recording")
    row = lib.run(runs / "proxy" / "session.loom.json")
    assert row is not None and (row.outcome, row.source) == ("finished", "recorded")
    indexer.note(runs / "proxy" / "session.loom.json", "recorded")
    assert lib.run(runs / "proxy" / "session.loom.json").outcome == "finished"  # type: ignore[union-attr]
    not_yet = runs / "later.loom.json"
    indexer.note(not_yet, "recording")  # the proxy has not written its file yet
    assert (lib.run(not_yet).state, lib.run(not_yet).outcome) == ("ok", "running")  # type: ignore[union-attr]
    assert indexer.forget(sample) and lib.run(sample) is None and not indexer.forget(sample)
    indexer.close()
    lib.close()


def test_a_forgotten_run_stays_forgotten_until_opened(runs: Path) -> None:
    indexer = Indexer()
    sample = runs / "sample.loom.json"
    indexer.index_folder(runs)
    lib = Library()
    assert lib.run(sample) is not None
    assert indexer.forget(sample)
    indexer.index_folder(runs)  # a rescan of its folder does not bring it back
    assert lib.run(sample) is None and sample.is_file()
    assert all(r.path != str(sample) for r in lib.runs(limit=1000))
    assert all(h.path != str(sample) for h in lib.search("slugify"))
    assert indexer.note(sample, "opened") == "indexed"  # opening it does
    assert lib.run(sample) is not None
    indexer.forget(sample)
    sample.unlink()
    indexer.refresh()  # forgotten, then deleted: not listed as missing either
    assert lib.run(sample) is None and all(r.path != str(sample) for r in lib.runs(limit=1000))
    indexer.close()
    lib.close()


def test_a_reader_that_fails_unexpectedly_marks_only_its_run(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_core.library import index

    real = index.file_run

    def flaky(path: str | Path) -> object:
        if str(path).endswith("sample-branch.loom.json"):
            raise KeyError("log")
        return real(path)

    monkeypatch.setattr(index, "file_run", flaky)
    report = Indexer().index_folder(runs)
    assert len(report.indexed) == 2 and report.unreadable == [str(runs / "sample-branch.loom.json")]
    assert (
        report.causes[str(runs / "sample-branch.loom.json")] == "cannot be read (KeyError: 'log')"
    )


def test_numbers_beyond_64_bits_are_indexed(tmp_path: Path) -> None:
    """A hand-edited seq or token count of 10**400 reads (JSON has no integer limit); the
    library stores it clamped instead of failing the file (the window's fuzz found it)."""
    from tests.core.fuzz.drive import REGRESSIONS

    indexer = Indexer(tmp_path / "lib.sqlite3")
    for name in ("numbers-huge-seq-timeline-axis.json", "numbers-huge-int-usage-diff.json"):
        path = tmp_path / name
        shutil.copy(REGRESSIONS / name, path)
        assert indexer.index_file(path) == "indexed"


def test_a_common_term_filters_the_runs_page_by_probing_runs(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_core.library import sqlite_runs

    indexer, lib = _index(runs)
    queries = (
        "slugify",
        "tool:git_push",
        "is:error",
        "get_weather",
        "model:claude-test weather",
        "tool:*_file",  # the index cannot narrow it: names are checked one by one
        "tool:get_*",
    )
    exact = {q: [r.path for r in lib.runs(q)] for q in queries}
    assert exact["get_weather"] == [str(runs / "proxy" / "session.loom.json")]
    assert len(exact["slugify"]) == 2  # the sample and its branch
    for query in ("tool:*_file", "tool:get_*"):
        assert set(exact[query]) == {h.path for h in lib.search(query, limit=1000)}
    assert exact["tool:*_file"] == [str(runs / "sample.loom.json")]
    monkeypatch.setattr(sqlite_runs, "EXACT_STEPS", 0)  # every term counts as common
    assert {q: [r.path for r in lib.runs(q)] for q in queries} == exact
    assert [r.path for r in lib.runs("slugify", limit=1, offset=1)] == exact["slugify"][1:]
    indexer.close()
