"""Every menu command shows that it did something: a window, a dialog, a status message,
a panel, focus, a tab or playback. A command that works silently reads as broken."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QMenu,
    QMessageBox,
)

from loom_desktop.main_window import MainWindow

SKIP = {"Quit", "Run offline demo"}  # ends the test / starts processes (tested in test_demo)


def _leaves(menu: QMenu, path: str) -> Iterator[tuple[str, QAction]]:
    for action in menu.actions():
        if action.isSeparator() or not action.isEnabled():
            continue
        name = f"{path} ▸ {action.text().replace('&', '')}"
        if action.menu() is not None:
            yield from _leaves(action.menu(), name)
        else:
            yield name, action


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Blocking dialogs are recorded and cancelled instead of shown."""
    calls: list[str] = []

    def record(name: str, result: Any) -> Any:
        return lambda *a, **k: calls.append(name) or result

    monkeypatch.setattr(QDialog, "exec", lambda self: calls.append(type(self).__name__) or 0)
    for name in ("getOpenFileNames", "getOpenFileName", "getSaveFileName"):
        monkeypatch.setattr(
            QFileDialog, name, staticmethod(record(name, ([] if name.endswith("s") else "", "")))
        )
    monkeypatch.setattr(QInputDialog, "getInt", staticmethod(record("getInt", (0, False))))
    monkeypatch.setattr(
        QMessageBox, "question", staticmethod(record("question", QMessageBox.StandardButton.No))
    )
    return calls


def _state(window: MainWindow, asked: list[str]) -> tuple[Any, ...]:
    view = window.current()
    return (
        len(asked),
        window.statusBar().currentMessage(),
        window.focusWidget(),
        tuple(d.isVisible() for d in window.findChildren(QDockWidget)),
        window.tabs.count(),
        view is not None and view.play_timer.isActive(),
    )


def test_every_menu_command_shows_it_did_something(
    qtbot, open_and_wait, window: MainWindow, sample: Path, asked: list[str]
) -> None:
    open_and_wait(window, sample)
    window.activateWindow()
    silent = []
    for name, action in [
        leaf for m in window.menuBar().actions() for leaf in _leaves(m.menu(), m.text())
    ]:
        if action.text().replace("&", "") in SKIP:
            continue
        if window.tabs.count() == 0:
            open_and_wait(window, sample)
        window.current().table.setFocus()
        window.statusBar().clearMessage()
        windows = {id(w) for w in QApplication.topLevelWidgets() if w.isVisible()}
        before = _state(window, asked)
        action.trigger()
        qtbot.wait(100)
        shown = [
            w for w in QApplication.topLevelWidgets() if w.isVisible() and id(w) not in windows
        ]
        if not shown and _state(window, asked) == before:
            silent.append(name)
        for w in shown:
            w.close()
        if window.current() is not None:
            window.current().play_timer.stop()
    assert not silent
