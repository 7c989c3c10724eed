"""File ▸ Listen for OpenTelemetry…: the menu entry, the status-bar word, the tabs.

Every trace that arrives opens as a tab on its ``<trace_id>.otlp.jsonl``; the file was
just written, so the tab follows it live (the foreign-format live follow re-reads it as
batches arrive). The status bar says where the app listens while it does; the menu entry
names the port. The receiver stops when the window closes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMenu

from loom_desktop.features.otel.dialog import ListenDialog
from loom_desktop.features.otel.listener import OtelListener

MENU_TEXT = "Listen for &OpenTelemetry…"


class OtelActions:
    """Owns the window's listener and its dialog; ``window`` is the main window."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.listener = OtelListener(window)
        self.listener.trace_arrived.connect(self._open)
        self.listener.state_changed.connect(self._show_state)
        self.action = QAction(MENU_TEXT, window)
        self.action.triggered.connect(lambda _checked=False: self.show_dialog())
        self.status = QLabel()
        self.status.setVisible(False)
        self.dialog: ListenDialog | None = None

    def install(self, menu: QMenu) -> QAction:
        """Add the menu entry and the (hidden until listening) status-bar label."""
        menu.addAction(self.action)
        self.window.statusBar().insertPermanentWidget(0, self.status)
        return self.action

    def show_dialog(self) -> ListenDialog:
        """The one dialog, raised if open."""
        if self.dialog is None:
            self.dialog = ListenDialog(
                self.listener, self.start, self.window.open_path, self.window
            )
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def start(self, port: int, folder: Path) -> bool:
        """Listen; a failure is an error dialog naming the address or folder and the cause."""
        try:
            self.listener.start(port, folder)
        except (OSError, ValueError) as err:
            where = getattr(err, "filename", None) or f"127.0.0.1:{port}"
            cause = getattr(err, "strerror", None) or str(err)
            self.window.report_error(
                "Cannot listen for OpenTelemetry", f"{where}: {cause}", self.dialog
            )
            return False
        return True

    def shutdown(self) -> None:
        """The window closes: stop the receiver (its files stay)."""
        self.listener.stop()
        if self.dialog is not None:
            self.dialog.close()

    def _open(self, _trace_id: str, path: str) -> None:
        self.window.open_path(path)
        self.window.show_status(f"OpenTelemetry trace received: {Path(path).name}", 10_000)

    def _show_state(self) -> None:
        on = self.listener.listening
        endpoint = self.listener.endpoint
        self.status.setVisible(on)
        self.status.setText(f"● OTel {endpoint.removeprefix('http://')}" if on else "")
        self.status.setToolTip(
            f"Listening for OpenTelemetry on {endpoint}; traces saved in {self.listener.folder}"
            if on
            else ""
        )
        self.action.setText(
            f"{MENU_TEXT} (listening on :{endpoint.rsplit(':', 1)[-1]})" if on else MENU_TEXT
        )
