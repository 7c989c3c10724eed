"""The window says what a file of unknown JSON records is, in the CLI's words (issue 22)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from loom_core.formats.unknown_json import CONSOLE_DUMP
from loom_desktop.main_window import MainWindow
from tests.core.formats.real_world import real_file


def _dialog_text(qtbot, window: MainWindow, path: Path) -> str:
    window.open_path(str(path))
    qtbot.waitUntil(lambda: bool(window.errors), timeout=10_000)
    boxes = [w for w in window.findChildren(QMessageBox) if w.isVisible()]
    assert boxes and str(path) in boxes[0].text()
    text = boxes[0].text() + boxes[0].informativeText()
    boxes[0].close()
    return text


def test_json_lines_and_a_console_dump_in_the_dialog(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    lines = tmp_path / "events.jsonl"
    lines.write_text('{"ts": 1, "event": "x"}\n{"ts": 2, "event": "y"}\n')
    said = _dialog_text(qtbot, window, lines)
    assert "JSON lines, but no format Loom Desktop reads (first record's keys: ts, event)" in said
    window.errors.clear()
    dump = real_file("otlp", "Josh-Weston__microsoft-agent-framework-samples__traces.jsonl")
    assert CONSOLE_DUMP in _dialog_text(qtbot, window, dump)
    assert window.tabs.count() == 0
