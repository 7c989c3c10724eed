"""The Runs page in the real window: the start page lists the library, search finds a step
across runs and opens it there with the match marked, View ▸ Runs docks it, Forget drops a
run (not its file), a deleted run stays listed as missing."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from loom_desktop.features.library.window_ui import step_terms
from loom_desktop.main_window import MainWindow

WAIT = 30_000


def _paths(window: MainWindow) -> list[str]:
    return [Path(r.path).name for r in window.library.controller.runs.runs]


def _with_runs(window: MainWindow, runs_dir: Path, sample: Path, names: list[str]) -> None:
    runs_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(sample, runs_dir / name)
    window.library.controller.indexer.add_folder(runs_dir)


def test_start_page_lists_the_runs_folder_and_what_was_opened(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path, open_and_wait: Any
) -> None:
    assert window.central.currentWidget() is window.library.start_page
    _with_runs(window, runs_dir, sample, ["a.loom.json", "b.loom.json"])
    qtbot.waitUntil(lambda: sorted(_paths(window)) == ["a.loom.json", "b.loom.json"], timeout=WAIT)
    open_and_wait(window, sample)  # the bundled sample: listed once opened, never written
    qtbot.waitUntil(lambda: "sample.loom.json" in _paths(window), timeout=WAIT)
    row = next(
        r for r in window.library.controller.runs.runs if r.path.endswith("sample.loom.json")
    )
    assert row.steps == 28 and row.format == "trace" and row.state == "ok"
    runs = window.library.controller.runs
    cells = [runs.index(runs.runs.index(row), c).data() for c in range(10)]
    assert cells[1] == "sample.loom.json" and cells[2].startswith("CI for textkit")
    assert cells[5] == "28" and cells[7] == "$0.1302" and cells[8] == "finished"


def test_search_opens_the_hit_at_its_step_with_the_match_marked(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    _with_runs(window, runs_dir, sample, ["one.loom.json"])
    page = window.library.page
    qtbot.waitUntil(lambda: _paths(window) == ["one.loom.json"], timeout=WAIT)
    page.search.setText("tool:git_push fix/slugify")
    qtbot.waitUntil(lambda: bool(window.library.controller.hits.hits), timeout=WAIT)
    hit = window.library.controller.hits.hits[0]
    assert hit.seq is not None and "«" in page.hits.model().index(0).data()
    page._open_hit(page.hits.model().index(0))
    view = window.current()
    qtbot.waitUntil(lambda: view.complete and view.session.timeline is not None, timeout=WAIT)
    # the search's step terms, whole: step 20 (the model step that called git_push) stays
    qtbot.waitUntil(lambda: view.filter_box.text() == "tool:git_push fix/slugify", timeout=WAIT)
    qtbot.waitUntil(lambda: view.model.rows is not None, timeout=WAIT)
    assert view.model.row_of(view.session.step) >= 0
    tl = view.session.timeline
    from loom_core.views.steps import step_seq

    assert step_seq(tl, view.session.step) == hit.seq


def test_runs_dock_toggles_from_the_view_menu(window: MainWindow) -> None:
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    action = next(a for a in view_menu.actions() if a.text() == "&Runs")
    assert action.shortcut().toString() == "Ctrl+Shift+R"
    assert not window.library.dock.isVisible()
    action.trigger()
    assert window.library.dock.isVisible()


def test_forget_and_missing(qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path) -> None:
    _with_runs(window, runs_dir, sample, ["keep.loom.json", "gone.loom.json"])
    c = window.library.controller
    qtbot.waitUntil(lambda: len(c.runs.runs) == 2, timeout=WAIT)
    c.forget(str(runs_dir / "keep.loom.json"))
    qtbot.waitUntil(lambda: _paths(window) == ["gone.loom.json"], timeout=WAIT)
    assert (runs_dir / "keep.loom.json").is_file()  # the file is left alone
    (runs_dir / "gone.loom.json").unlink()
    qtbot.waitUntil(lambda: [r.state for r in c.runs.runs] == ["missing"], timeout=WAIT)
    assert "missing" in c.runs.index(0, 8).data()


def test_bad_query_is_named_not_raised(qtbot: Any, window: MainWindow) -> None:
    window.library.page.search.setText("after:yesterday")
    qtbot.waitUntil(lambda: "⚠" in window.library.page.status.text(), timeout=WAIT)
    assert "after" in window.library.page.status.text()


def test_the_indexers_progress_does_not_wipe_a_querys_warning(
    qtbot: Any, window: MainWindow
) -> None:
    """This test's former self timed out under load: the indexer's progress (its scans
    ending) redrew the status line from the last answer, and the warning was gone before
    it could be read; a user lost it the same way."""
    page, controller = window.library.page, window.library.controller
    page.search.setText("after:yesterday")
    qtbot.waitUntil(lambda: "⚠" in page.status.text(), timeout=WAIT)
    controller.progressed.emit("scanning 1/2 runs")  # what the indexer says meanwhile
    controller.progressed.emit("")  # … and when it is done
    assert page.status.text().startswith("⚠") and "after" in page.status.text()
    page.search.setText("")  # a query that is answered clears it
    qtbot.waitUntil(lambda: not page.status.text().startswith("⚠"), timeout=WAIT)


def test_step_terms_drop_run_keys() -> None:
    assert step_terms('model:gpt-5 tool:bash "rm -rf" after:2026-11-01') == 'tool:bash "rm -rf"'
