"""A run too big for the memory left is refused by the window with a dialog naming the file
and the cause, before anything reads it (issue 24's 10,000,000-effect run under a 12 GB
limit: the window read for minutes, then said only "MemoryError:"). The limit is injected:
the bundled 30-step sample stands for a file bigger than what is left."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from loom_core.formats import memory_room
from loom_desktop.main_window import MainWindow
from loom_desktop.resources import sample_trace
from tests.core.no_reads import forbid_whole_reads


def test_a_run_too_big_for_the_memory_left_is_refused_with_its_cause(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = sample_trace()
    monkeypatch.setattr(memory_room, "available_bytes", lambda: path.stat().st_size)
    forbid_whole_reads(monkeypatch)
    window.open_path(str(path))
    qtbot.waitUntil(lambda: bool(window.failures), timeout=15_000)
    failed, cause = window.failures[-1]
    assert failed == str(path)
    assert cause.startswith("too big for the memory left: opening this 0.0 GB file needs about")
    boxes = [b for b in window.findChildren(QMessageBox) if b.windowTitle() == "Cannot open file"]
    assert boxes and str(path) in boxes[-1].text() and "GB available" in boxes[-1].text()
    assert window.tabs.count() == 0
