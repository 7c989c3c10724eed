"""A run a live tab follows is left to the tab while it grows, and read once it settles.

Why: the library watched a run the app had open and re-read it while it grew, so every
line appended to a followed run woke the library's watchdog threads and its indexer too
(0.39 s of CPU while 1,000 rows came, more than the tab's own tailer: issue 24's live
tail). The tab says when it follows a run and when the run settled or the tab closed;
nothing written meanwhile may be left unindexed. The files are the bytes loom-harness
writes.
"""

from __future__ import annotations

from pathlib import Path

from loom_core.library.rows import RunRow
from loom_core.library.search import Library
from loom_core.library.worker import LibraryIndexer
from tests.core.harness_runs import journal_complete

WAIT = 60.0


def _row(path: Path) -> RunRow | None:
    with Library() as lib:
        return lib.run(path)


def _steps(path: Path) -> int:
    row = _row(path)
    assert row is not None
    return row.steps


def _started(tmp_path: Path, folders: list[Path]) -> tuple[Path, list[bytes], LibraryIndexer]:
    """A harness journal's header and first line written at ``tmp_path/live/run.jsonl``, the
    app's note that it opened it, and the library's worker idle after reading it."""
    made, _run = journal_complete(tmp_path)
    lines = made.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live" / "run.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(lines[:2]))
    worker = LibraryIndexer(folders, settle=0.05)
    worker.start()
    worker.note(path, "opened")
    assert worker.wait_idle(WAIT)
    return path, lines[2:], worker


def test_a_followed_run_is_not_watched_and_is_read_once_unfollowed(tmp_path: Path) -> None:
    path, rest, worker = _started(tmp_path, [])
    try:
        watcher = worker._watcher
        assert watcher is not None and str(path.parent) in watcher._file_folders
        before = _steps(path)
        worker.follow(path)  # a live tab follows it
        assert worker.wait_idle(WAIT)
        assert watcher._file_folders == {}  # its folder wakes no thread of the library
        with path.open("ab") as out:
            out.writelines(rest)  # the run goes on and ends
        assert worker.wait_idle(WAIT)
        assert _steps(path) == before  # nothing watches it: the tab reads it
        worker.unfollow(path)  # the run settled (or the tab closed)
        assert worker.wait_idle(WAIT)
        assert str(path.parent) in watcher._file_folders  # watched again
        assert _steps(path) == 6  # and what it became is indexed
    finally:
        worker.stop()


def test_a_run_two_tabs_follow_is_left_alone_until_both_let_go(tmp_path: Path) -> None:
    path, rest, worker = _started(tmp_path, [])
    try:
        before = _steps(path)
        worker.follow(path)
        worker.follow(path)
        with path.open("ab") as out:
            out.writelines(rest)
        worker.unfollow(path)  # one tab closed, the other still follows
        assert worker.wait_idle(WAIT)
        assert worker._watcher is not None and worker._watcher._file_folders == {}
        assert _steps(path) == before
        worker.unfollow(path)
        assert worker.wait_idle(WAIT)
        assert _steps(path) == 6
    finally:
        worker.stop()


def test_a_followed_run_in_a_library_folder_is_not_read_on_its_changes(tmp_path: Path) -> None:
    """In a folder the library watches (recursively), the folder stays watched: the
    followed run's own changes are dropped as they come, the others' are not."""
    path, _rest, worker = _started(tmp_path, [tmp_path / "live"])
    other = path.parent / "other.jsonl"
    try:
        worker.follow(path)
        worker._changed_path(str(path), False)  # what the folder's watch says per line
        worker._changed_path(str(other), False)
        assert set(worker._dirty) == {str(other)}
    finally:
        worker.stop()


def test_a_run_still_followed_when_the_app_quits_is_read_before_the_worker_ends(
    tmp_path: Path,
) -> None:
    path, rest, worker = _started(tmp_path, [])
    try:
        worker.follow(path)
        with path.open("ab") as out:
            out.writelines(rest)
    finally:
        worker.stop()  # the window closes with the live tab open
    assert _steps(path) == 6
