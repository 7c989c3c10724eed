"""A search hit in a later sample of an Inspect AI log opens the log at that sample and step.

Why: the log opens at its first sample; a hit found in sample 7, epoch 2 that opened there
would show a step of another run. The log is written by the real producer
(``tests/inspect_producer.py``), once per module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from loom_core.views.steps import step_seq
from loom_desktop.main_window import MainWindow
from tests.desktop.features.library.test_runs_open import search_runs
from tests.inspect_producer import eval_log

WAIT = 30_000


@pytest.fixture(scope="module")
def log() -> Path:
    return eval_log()


def _double_click(qtbot: Any, page: Any, row: int) -> None:
    rect = page.hits.visualRect(page.hits.model().index(row, 0))
    assert rect.isValid()
    for click in (qtbot.mousePress, qtbot.mouseRelease, qtbot.mouseDClick, qtbot.mouseRelease):
        click(page.hits.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_a_hit_in_a_later_sample_opens_there(
    qtbot: Any, window: MainWindow, log: Path, runs_dir: Path
) -> None:
    page = search_runs(qtbot, window, runs_dir, log, "tool:secret", name="task.eval")
    controller = window.library.controller
    qtbot.waitUntil(lambda: page.hits.isVisible(), timeout=WAIT)
    hits = controller.hits.hits
    row = next(n for n, h in enumerate(hits) if h.sample == "7:2" and h.seq is not None)
    hit = hits[row]
    assert "sample 7 · epoch 2 · step" in page.hits.model().index(row, 0).data()

    _double_click(qtbot, page, row)
    qtbot.waitUntil(lambda: bool(window.documents()), timeout=WAIT)
    view = window.documents()[0]
    qtbot.waitUntil(
        lambda: (
            view.sample_bar is not None
            and view.doc.extra["sample"]["epoch"] == 2
            and step_seq(view.session.timeline, view.session.step) == hit.seq
        ),
        timeout=WAIT,
    )
    assert view.sample_bar.current() == "7:2"
    assert view.sample_bar.combo.currentText().startswith("7 · epoch 2")
    assert (view.doc.extra["sample"]["id"], view.doc.extra["sample"]["epoch"]) == ("7", 2)

    page._open_hit(page.hits.model().index(row))  # again: shown in the same tab
    qtbot.wait(200)
    assert window.documents() == [view]
    assert step_seq(view.session.timeline, view.session.step) == hit.seq
