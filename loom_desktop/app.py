"""The application object: every request to open a file becomes one signal.

macOS delivers Finder opens as ``QFileOpenEvent`` (possibly before any window
exists); command-line paths and, later, a second instance's paths join the same
``open_requested`` signal. Events that arrive before someone listens are queued.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QEvent, QtMsgType, Signal, qInstallMessageHandler
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtWidgets import QApplication


_NOISE = ("propagateSizeHints",)  # the offscreen platform's harmless complaint


def _qt_message(kind: QtMsgType, _context: object, message: str) -> None:
    if kind == QtMsgType.QtDebugMsg or any(n in message for n in _NOISE):
        return
    print(f"qt: {message}", file=sys.stderr)


def quiet_qt_noise() -> None:
    """Drop Qt's known-harmless platform chatter; pass everything else to stderr."""
    qInstallMessageHandler(_qt_message)


class LoomApplication(QApplication):
    """QApplication with a single ``open_requested(path)`` entry point."""

    open_requested = Signal(str)

    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv)
        self.setApplicationName("Loom Desktop")
        self.setOrganizationName("loom-desktop")
        self.setDesktopFileName("loom-desktop")
        self._pending: list[str] = []
        self._listening = False

    def start_listening(self) -> None:
        """Deliver queued open requests, then deliver new ones as they come."""
        self._listening = True
        pending, self._pending = self._pending, []
        for path in pending:
            self.open_requested.emit(path)

    def request_open(self, path: str) -> None:
        if self._listening:
            self.open_requested.emit(path)
        else:
            self._pending.append(path)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FileOpen and isinstance(event, QFileOpenEvent):
            self.request_open(event.file())
            return True
        return super().event(event)
