"""The window opens a file through the one reader its first bytes decide (issue 24): what
the command line reads, the window shows, and a file refused by its first bytes is
refused before anything reads it whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from loom_core.formats.loader import load
from loom_core.formats.reader import BOM
from loom_desktop.main_window import MainWindow
from tests.core.live_helpers import effect, header, model_result
from tests.core.no_reads import forbid_whole_reads


def test_a_journal_with_a_byte_order_mark_shows_what_the_command_line_reads(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "bom.journal.jsonl"
    path.write_bytes(BOM + header("go") + effect(0, "model", model_result("hi")))
    assert len(load(path).effects) == 1
    view = window.open_path(str(path))
    qtbot.waitUntil(lambda: view.session.count == 2, timeout=20_000)  # the prompt and step 0
    assert not window.failures


def test_a_file_of_nul_bytes_is_refused_without_reading_it(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "zeros.loom.json"
    with open(path, "wb") as fh:
        fh.truncate(2 << 30)  # sparse: 2 GB of NUL bytes on no disk
    forbid_whole_reads(monkeypatch)
    window.open_path(str(path))
    qtbot.waitUntil(lambda: bool(window.failures), timeout=15_000)
    assert window.failures[-1] == (
        str(path),
        "binary data, not a text file (byte 0x00 at offset 0)",
    )
    boxes = [b for b in window.findChildren(QMessageBox) if b.windowTitle() == "Cannot open file"]
    assert boxes and "binary data" in boxes[-1].text()
    assert window.tabs.count() == 0
