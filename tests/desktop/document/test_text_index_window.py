"""A tab indexes its run's text after the plot is shown, keeps the index beside the run
library's database, and a second open of the run maps it instead of building it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loom_core.views import step_index, text_index
from loom_core.views.filtering import filter_steps
from loom_desktop.document.text_index_task import index_folder
from loom_desktop.main_window import MainWindow
from tests.desktop.document.test_filter_stream import _trace


def test_a_tab_indexes_its_text_and_a_second_open_maps_it(
    qtbot,
    open_and_wait,
    window: MainWindow,
    tmp_path: Path,
    library_db: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = _trace(tmp_path / "t.loom.json", 800)
    view = open_and_wait(window, path)
    tl = view.session.timeline
    qtbot.waitUntil(lambda: step_index.step_index(tl).text_index is not None, timeout=20_000)
    assert os.path.dirname(index_folder()) == str(library_db.parent)
    assert len(os.listdir(index_folder())) == 1
    finished: list[object] = []
    view._filter_task.finished.connect(finished.append)
    view.filter_box.setText("needle")
    qtbot.waitUntil(lambda: bool(finished), timeout=10_000)
    assert list(view.model.rows or []) == list(filter_steps(tl, "needle") or [])

    def never(*_args: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(text_index, "build", never)
    window.close_tab(window.tabs.indexOf(view))
    again = open_and_wait(window, path)
    tl2 = again.session.timeline
    assert tl2 is not tl
    qtbot.waitUntil(lambda: step_index.step_index(tl2).text_index is not None, timeout=20_000)
