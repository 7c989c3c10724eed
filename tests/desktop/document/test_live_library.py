"""A live tab keeps the run library off its run while it grows, and hands it back.

Why: the library watched the run the tab followed and read it as it grew, so each line
appended woke the library's watchdog threads and its indexer besides the tab's tailer
(0.39 s of CPU against the tailer's 0.23 s while 1,000 rows came: issue 24's live tail).
The tab tells the library when it follows a run, when the run settles (it ended) and when
the tab closes; nothing written meanwhile may be left unindexed. The journals are the
bytes loom-harness writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loom_core.library.search import Library
from loom_core.live.live_status import FINISHED
from loom_desktop.main_window import MainWindow
from tests.core.harness_runs import journal_complete

WAIT_MS = 60_000


def _steps(path: Path) -> int:
    with Library() as lib:
        row = lib.run(path)
    return -1 if row is None else row.steps


def _journal(tmp_path: Path) -> tuple[Path, list[bytes]]:
    """A harness run's journal with its header and first line written; the rest."""
    made, _run = journal_complete(tmp_path)
    lines = made.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live" / "run.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(lines[:2]))
    return path, lines[2:]


def _followed(window: MainWindow) -> Any:
    return window.library.controller.indexer._followed


def test_a_followed_run_is_indexed_once_it_ends(qtbot, window: MainWindow, tmp_path) -> None:
    path, rest = _journal(tmp_path)
    view = window.open_path(str(path), watch=True)
    assert dict(_followed(window)) == {str(path): 1}  # the library leaves it to the tab
    with path.open("ab") as out:
        out.writelines(rest)  # the run goes on and finishes
    qtbot.waitUntil(lambda: view.live.status == FINISHED, timeout=WAIT_MS)
    assert not _followed(window)  # it settled: the library reads it again
    qtbot.waitUntil(lambda: _steps(path) == 6, timeout=WAIT_MS)


def test_a_followed_run_is_indexed_once_its_tab_closes(qtbot, window: MainWindow, tmp_path) -> None:
    path, rest = _journal(tmp_path)
    view = window.open_path(str(path), watch=True)
    qtbot.waitUntil(lambda: view.complete, timeout=WAIT_MS)  # read and listed
    with path.open("ab") as out:
        out.writelines(rest[:-1])  # the run goes on, unfinished
    qtbot.waitUntil(lambda: view.session.count >= 5, timeout=WAIT_MS)
    assert dict(_followed(window)) == {str(path): 1}
    window.close_tab(window.tabs.indexOf(view))
    assert not _followed(window)
    qtbot.waitUntil(lambda: _steps(path) >= 5, timeout=WAIT_MS)  # what it became
    with path.open("ab") as out:
        out.writelines(rest[-1:])
    qtbot.waitUntil(lambda: _steps(path) == 6, timeout=WAIT_MS)  # and watched again
