"""Tabs of files with the same name show their folder, like editors; the tooltip is the path."""

from __future__ import annotations

import shutil
from pathlib import Path

from loom_desktop.main_window import MainWindow
from loom_desktop.tab_titles import distinct_names


def test_distinct_names_add_the_shortest_differing_folder_tail() -> None:
    assert distinct_names(["/x/a/run.json", "/x/b/run.json", "/y/c.json"]) == [
        "run.json · a",
        "run.json · b",
        "c.json",
    ]
    assert distinct_names(["/x/a/run.json", "/y/a/run.json"]) == [
        "run.json · x/a",
        "run.json · y/a",
    ]
    assert distinct_names(["/x/a/run.json", "/x/a/run.json"]) == ["run.json", "run.json (2)"]


def test_same_named_tabs_can_be_told_apart(
    qtbot, open_and_wait, window: MainWindow, sample: Path, tmp_path: Path
) -> None:
    paths = []
    for folder in ("monday", "tuesday"):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "run.loom.json")
        shutil.copy(sample, paths[-1])
    first = open_and_wait(window, paths[0])
    assert window.tabs.tabText(0) == "run.loom.json"  # alone: just the name
    second = open_and_wait(window, paths[1])
    tabs = window.tabs
    assert [tabs.tabText(i) for i in range(2)] == [
        "run.loom.json · monday",
        "run.loom.json · tuesday",
    ]
    assert [tabs.tabToolTip(i) for i in range(2)] == [str(p) for p in paths]
    window.close_tab(tabs.indexOf(first))
    assert tabs.tabText(tabs.indexOf(second)) == "run.loom.json"


def test_window_title_names_the_current_tab_and_no_tab_says_how_to_open(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    assert (
        window.central.currentWidget() is window.library.start_page
        and "Ctrl+O" in window.empty.text()
    )
    assert window.windowTitle() == "Loom Desktop"
    view = open_and_wait(window, sample)
    assert window.windowTitle() == "sample.loom.json — Loom Desktop"
    assert window.central.currentWidget() is window.tabs
    window.close_tab(window.tabs.indexOf(view))
    assert (
        window.windowTitle() == "Loom Desktop"
        and window.central.currentWidget() is window.library.start_page
    )


def test_window_title_follows_a_renamed_tab(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    window.tabs.setTabText(
        window.tabs.indexOf(view), "● branch of sample at step 14"
    )  # as a fork does
    assert window.windowTitle() == "● branch of sample at step 14 — Loom Desktop"
