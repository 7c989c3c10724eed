"""What the features and the document tab may ask of the main window, as a protocol.

Why: controllers used to reach into the window (``window.errors.append(...)`` and a
message box built at five places, ``window.statusBar()``). They now ask for a service
by name; :class:`~loom_desktop.main_window.MainWindow` implements it, keeping its
``errors`` list (which tests read) as its own detail, and no feature imports the
window's module.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from PySide6.QtWidgets import QMessageBox, QWidget


@runtime_checkable
class WindowServices(Protocol):
    """Report an error, say something in the status bar."""

    def report_error(
        self, title: str, message: str, parent: QWidget | None = None, details: str = ""
    ) -> QMessageBox:
        """Show a (non-blocking) error dialog naming the file and the cause over ``parent``
        (default: the window) and keep ``message`` (with ``details``, which the dialog shows
        as its informative text) in the window's error log; returns the open dialog."""
        ...

    def show_status(self, message: str, timeout_ms: int) -> None:
        """Say ``message`` in the status bar for ``timeout_ms``."""
        ...

    def note_run(self, path: str, event: str, error: str = "") -> None:
        """Tell the run library the app ``recording``/``recorded``/``forked``/``healed``
        ``path`` (it lists it, running or done, and indexes it); ``error``: the error the
        app saw end the run (the demo's agent crashed: the run is failed). Never blocks."""
        ...
