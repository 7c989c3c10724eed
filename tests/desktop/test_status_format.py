"""The status bar names a foreign run's file by its format, with no loom version: "otlp v2",
"inspect v2" and "claude-code v2" named versions those formats do not have (2 was the
version of the loom trace the run was read into)."""

from __future__ import annotations

from pathlib import Path

from loom_desktop.main_window import MainWindow
from tests.core.formats.claude_fixtures import full_session


def test_a_claude_code_session_is_named_not_versioned(
    qtbot, window: MainWindow, tmp_path: Path, open_and_wait
) -> None:
    path, _main, _sub = full_session(tmp_path / "projects")
    view = open_and_wait(window, path)
    window.update_status()
    text = window.status_labels["format"].text()
    assert text.startswith("Claude Code transcript") and " v2" not in text
    if view.live is not None:
        view.live.stop()


def test_a_loom_trace_keeps_its_version(qtbot, window: MainWindow, sample, open_and_wait) -> None:
    open_and_wait(window, sample)
    window.update_status()
    assert window.status_labels["format"].text() == "trace v2"
