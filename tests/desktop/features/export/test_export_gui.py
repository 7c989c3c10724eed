"""File ▸ Export ▸ Self-contained HTML in the real window: where the user chose, in a worker,
the status bar says where it went; an unwritable target is an error dialog naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog

from loom_desktop.main_window import MainWindow


def _export_actions(window: MainWindow) -> list[str]:
    file_menu = window.menuBar().actions()[0].menu()
    export = next(a.menu() for a in file_menu.actions() if a.text() == "&Export")
    return [a.text() for a in export.actions()]


def test_menu_export_writes_the_chosen_file(
    qtbot: Any,
    window: MainWindow,
    open_and_wait: Any,
    sample: Path,
    tmp_path: Path,
    monkeypatch: Any,
) -> None:
    assert _export_actions(window) == [
        "Self-contained &HTML…",
        "Self-contained HTML, Secrets &Scrubbed…",
    ]
    open_and_wait(window, sample)
    target = tmp_path / "out" / "shared.html"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.exports.ask()
    qtbot.waitUntil(lambda: "Exported" in window.statusBar().currentMessage(), timeout=30_000)
    assert str(target) in window.statusBar().currentMessage()
    page = target.read_text()
    assert "loom-data" in page and "sample.loom.json" in page
    assert [p.name for p in target.parent.iterdir()] == ["shared.html"]  # nothing else written


def test_cancelled_dialog_writes_nothing(
    window: MainWindow, open_and_wait: Any, sample: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    open_and_wait(window, sample)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: ("", ""))
    window.exports.ask()
    assert not window.exports.task.running


def test_unwritable_target_is_an_error_dialog(
    qtbot: Any, window: MainWindow, open_and_wait: Any, sample: Path, tmp_path: Path
) -> None:
    view = open_and_wait(window, sample)
    target = tmp_path / "no such folder" / "x.html"
    window.exports.export(view.doc, view.session.timeline, str(target))
    qtbot.waitUntil(lambda: bool(window.errors), timeout=30_000)
    assert str(target) in window.errors[-1]
