"""Opening a hit carries its terms into the tab's filter; the filter shows more steps than
the search found, and the window says why (the search matched whole words)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from loom_desktop.main_window import MainWindow

WAIT = 30_000


def test_opening_a_hit_says_why_the_filter_shows_more_steps(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    runs_dir.mkdir(parents=True)
    shutil.copy(sample, runs_dir / "mine.loom.json")
    controller = window.library.controller
    controller.indexer.add_folder(runs_dir)
    qtbot.waitUntil(lambda: len(controller.runs.runs) == 1, timeout=WAIT)
    window.library.page.search.setText("error")
    qtbot.waitUntil(lambda: [h.seq for h in controller.hits.hits] == [4], timeout=WAIT)
    window.library.page._open_hit(window.library.page.hits.model().index(0))
    qtbot.waitUntil(lambda: window.current() is not None, timeout=WAIT)
    view = window.current()
    qtbot.waitUntil(
        lambda: view.filter_box.text() == "error" and view.model.rows is not None, timeout=WAIT
    )
    qtbot.waitUntil(lambda: len(view.model.rows) == 6, timeout=WAIT)  # 1 hit, 6 rows
    said = window.statusBar().currentMessage()
    assert "matched “error” as whole words" in said and "differ from the search's hits" in said
