"""Small parts of the main window's shell that keep it honest about its size and state.

Why they exist: panels appearing made the window grow (their minimum sizes added up
side by side), the title named no run, and an empty window said nothing.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QStatusBar, QTabWidget, QWidget

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


class MessageLabel(QLabel):
    """A passing message, shortened in the middle to the width the status bar gives it (a
    path keeps its start and its file name), whole in its tooltip; it asks for no width."""

    def __init__(self) -> None:
        super().__init__()
        self.setContentsMargins(2, 0, MESSAGE_GAP, 0)
        self.setMinimumWidth(1)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(1, super().minimumSizeHint().height())

    def shown_text(self) -> str:
        """The text as it fits now."""
        room = self.contentsRect().width()
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle, room)

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        shown = self.shown_text()
        self.setToolTip(self.text() if shown != self.text() else "")
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(self.contentsRect(), align, shown)


class StatusBar(QStatusBar):
    """A status bar whose passing messages stop short of the run's figures. Qt paints a
    message itself, cut mid-word at the first permanent field, so it read as if it ran into
    "step 11 · 13 of 13", and it is sized once, before the figures change. Here a message is
    a label in the bar's layout, left of the figures: the layout gives it what is left, and
    it shortens itself to that, again at every change of either."""

    def __init__(self) -> None:
        super().__init__()
        self.message = MessageLabel()
        self.addWidget(self.message, 1)
        self._clear = QTimer(self, singleShot=True)
        self._clear.timeout.connect(self.clearMessage)

    def insertPermanentWidget(  # noqa: N802 - Qt API
        self, index: int, widget: QWidget, stretch: int | None = 0
    ) -> int:
        """``index`` among the permanent fields, as with a plain bar: Qt counts the message
        label too, so index 0 (the listener's field, first) was out of range, appended after
        the figures, with a warning on stderr."""
        return super().insertPermanentWidget(index + 1, widget, stretch or 0)

    def showMessage(self, message: str, timeout: int | None = 0) -> None:  # noqa: N802 - Qt API
        self.message.setText(message)
        if timeout:
            self._clear.start(timeout)
        else:
            self._clear.stop()
        self.messageChanged.emit(message)

    def clearMessage(self) -> None:  # noqa: N802 - Qt API
        self._clear.stop()
        if self.message.text():
            self.message.clear()
            self.messageChanged.emit("")

    def currentMessage(self) -> str:  # noqa: N802 - Qt API
        return self.message.text()


MESSAGE_GAP = 16  # pixels between a passing message and the run's figures


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
