"""Small parts of the main window's shell that keep it honest about its size and state.

Why they exist: panels appearing made the window grow (their minimum sizes added up
side by side), the title named no run, and an empty window said nothing.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabWidget

EMPTY_TEXT = (
    "No run is open.\n\nFile ▸ Open… (Ctrl+O) or drop a trace, journal or wirelog here;\n"
    "Help ▸ Run offline demo shows a live run with an approval, no API key needed."
)


class DocumentTabs(QTabWidget):
    """Tabs that say when a title changes (a branch names its tab when it starts): the
    window title follows the current tab's."""

    retitled = Signal()

    def setTabText(self, index: int, text: str) -> None:  # noqa: N802 - Qt API
        super().setTabText(index, text)
        self.retitled.emit()


def held_message(count: int) -> str:
    """Short: the status bar shows it left of the run's figures, which leave it little room
    at 1000 px (the approvals panel's title names the proxy)."""
    return f"{count} call{'s' if count != 1 else ''} held for approval"


def join_area(
    window: QMainWindow, area: Qt.DockWidgetArea, dock: QDockWidget, others: list[QDockWidget]
) -> None:
    """Make ``dock``, just added to ``area``, a tab beside the panels already there
    (``others``), and bring it to the front, also later when asked for from the menu.

    Side by side (bottom) or stacked (right), panels' minimum sizes add up: a second
    proxy's panel or the doctor next to a proxy made the window grow past the screen.
    As tabs, the area is as large as its largest panel needs, and it keeps its size (or
    its minimum, if not laid out yet): the tab bar's hint, all titles side by side,
    would widen it."""
    dock.toggleViewAction().triggered.connect(
        lambda on, d=dock: on and QTimer.singleShot(0, d, d.raise_)
    )
    if not others:
        return
    vertical = area in (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea)
    first = others[0]
    size = (first.width() if vertical else first.height()) if first.isVisible() else 1
    window.tabifyDockWidget(first, dock)
    dock.raise_()
    QTimer.singleShot(
        0,
        dock,
        lambda: window.resizeDocks(
            [dock], [size], Qt.Orientation.Horizontal if vertical else Qt.Orientation.Vertical
        ),
    )
