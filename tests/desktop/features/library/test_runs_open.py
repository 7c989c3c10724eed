"""Opening a run from the Runs page the way a user does: a double-clicked hit opens its run
once, a run already open is shown in its tab (at the hit's step), and a hit on the model
step that called a tool stays in the list the tab's filter shows."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from loom_core.views.steps import step_seq
from loom_desktop.features.library.window_ui import step_terms
from loom_desktop.main_window import MainWindow

WAIT = 30_000


def search_runs(
    qtbot: Any,
    window: MainWindow,
    runs_dir: Path,
    sample: Path,
    query: str,
    name: str = "one.loom.json",
) -> Any:
    """``sample`` indexed as the runs folder's ``name``, and ``query`` typed in the Runs
    page's search box: the page, once it lists hits."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(sample, runs_dir / name)
    controller = window.library.controller
    controller.indexer.add_folder(runs_dir)
    qtbot.waitUntil(lambda: len(controller.runs.runs) == 1, timeout=WAIT)
    page = window.library.page
    page.search.setText(query)
    qtbot.waitUntil(lambda: bool(controller.hits.hits), timeout=WAIT)
    return page


def _filtered(qtbot: Any, view: Any, text: str) -> None:
    """Wait until the tab shows ``text``'s filter result."""
    qtbot.waitUntil(
        lambda: (
            view.filter_box.text() == text
            and not view._filter_timer.isActive()
            and not view._filter_task.running
            and view.model.rows is not None
        ),
        timeout=WAIT,
    )


def test_a_double_clicked_hit_opens_its_run_once(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    page = search_runs(qtbot, window, runs_dir, sample, "tool:git_push fix/slugify")
    qtbot.waitUntil(lambda: page.hits.isVisible(), timeout=WAIT)
    rect = page.hits.visualRect(page.hits.model().index(0, 0))
    assert rect.isValid()
    for click in (qtbot.mousePress, qtbot.mouseRelease, qtbot.mouseDClick, qtbot.mouseRelease):
        click(page.hits.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: bool(window.documents()), timeout=WAIT)
    view = window.documents()[0]
    qtbot.waitUntil(lambda: view.complete, timeout=WAIT)
    qtbot.wait(200)  # a second open would have been queued by now
    assert len(window.documents()) == 1


def test_a_hit_in_an_open_run_is_shown_in_its_tab(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    page = search_runs(qtbot, window, runs_dir, sample, "tool:read_file slugify")
    hits = window.library.controller.hits.hits
    assert len(hits) >= 2
    page._open_hit(page.hits.model().index(0))
    view = window.current()
    qtbot.waitUntil(lambda: view is not None and view.complete, timeout=WAIT)
    page._open_hit(page.hits.model().index(1))
    assert window.documents() == [view]
    tl = view.session.timeline
    assert step_seq(tl, view.session.step) == hits[1].seq


def test_a_hit_on_the_calling_model_step_is_not_filtered_out(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    """``tool:read_file`` across runs finds step 7 (the model step that called read_file);
    the tab's filter takes the search's terms whole and still lists it: ``tool:`` means
    the same there (the tool's steps and the model steps that called it)."""
    page = search_runs(qtbot, window, runs_dir, sample, "tool:read_file slugify")
    hits = window.library.controller.hits.hits
    row = next(i for i, h in enumerate(hits) if h.seq == 7)
    page._open_hit(page.hits.model().index(row))
    view = window.current()
    qtbot.waitUntil(lambda: view is not None and view.complete, timeout=WAIT)
    tl = view.session.timeline
    assert tl.kind_name(view.session.step) == "model" and step_seq(tl, view.session.step) == 7
    _filtered(qtbot, view, "tool:read_file slugify")
    assert view.model.row_of(view.session.step) >= 0  # the hit's step is listed


def test_step_terms_keep_tools() -> None:
    assert step_terms('tool:bash "rm -rf" model:x') == 'tool:bash "rm -rf"'


def test_the_count_says_run_for_one(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    page = search_runs(qtbot, window, runs_dir, sample, "CHANGELOG")
    assert page.status.text() == "1 of 1 run · 1 matching step"
    page.search.setText("")
    qtbot.waitUntil(lambda: page.status.text() == "1 run", timeout=WAIT)


def test_a_long_run_name_leaves_the_numbers_in_view(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    """A Claude Code session or an Inspect log has a long file name: the Run column is
    capped (the tooltip has the path), so Steps, Tokens and Cost stay on the page."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    long = "2026-12-01T23-58-42-00-00_task_Yj3KMwzjcz9urp67Z9e2qE-and-more.loom.json"
    shutil.copy(sample, runs_dir / long)
    controller = window.library.controller
    controller.indexer.add_folder(runs_dir)
    qtbot.waitUntil(lambda: len(controller.runs.runs) == 1, timeout=WAIT)
    table = window.library.page.table
    qtbot.waitUntil(lambda: table.columnWidth(5) > 0, timeout=WAIT)
    window.library.page._answered()
    assert table.columnWidth(1) < table.fontMetrics().horizontalAdvance(long)
    cost = table.columnViewportPosition(7) + table.columnWidth(7)
    assert 0 < cost <= table.viewport().width()


def test_the_dock_steps_aside_for_the_start_page(
    qtbot: Any, window: MainWindow, sample: Path, open_and_wait: Any
) -> None:
    """Closing the last tab shows the start page, which lists the runs: the Runs dock beside
    it was the same list and search box again. It comes back with the next tab."""
    open_and_wait(window, sample)
    window.library.dock.show()
    window.close_tab(0)
    assert window.central.currentWidget() is window.library.start_page
    assert not window.library.dock.isVisible()
    open_and_wait(window, sample)
    assert window.library.dock.isVisible()


def test_a_hidden_page_fits_its_columns_when_shown(
    qtbot: Any, window: MainWindow, sample: Path, open_and_wait: Any, monkeypatch: Any
) -> None:
    """Every run opened changes the library and so the Runs list; fitting the columns of a
    page nobody sees is GUI-thread work for nothing, so the page fits them when shown."""
    page = window.library.page
    fitted: list[int] = []
    real = page.table.resizeColumnToContents
    monkeypatch.setattr(page.table, "resizeColumnToContents", lambda c: (fitted.append(c), real(c)))
    open_and_wait(window, sample)  # the start page is hidden behind the tab
    controller = window.library.controller
    qtbot.waitUntil(lambda: len(controller.runs.runs) == 1, timeout=WAIT)
    page._answered()
    assert not page.isVisible() and fitted == []
    window.close_tab(0)  # the start page again
    assert page.isVisible() and fitted
