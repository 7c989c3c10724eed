"""A desktop notification when a proxy holds a tool call while the window is in the background.

Why: a held call blocks the agent until someone decides, and the person who can
decide is usually looking at another window. So once per held call, and only when
the main window is not the active one (or is minimised), the tray shows a message
(the app icon, the tool and the rule); without a system tray (some Linux desktops,
the offscreen platform) the taskbar entry is flashed with ``QApplication.alert``.
Clicking the message brings the window back and selects that call's card in its
approvals panel. The tray icon exists only from the first notification on, and is
hidden again when the window closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

if TYPE_CHECKING:  # the control client (urllib, its models) comes with the first proxy
    from loom_core.proxy.control_client import PendingCall

SHOW_MS = 15_000


class Tray(Protocol):
    """What we use of ``QSystemTrayIcon`` (tests pass a fake with the same members)."""

    messageClicked: Any

    def show(self) -> None: ...
    def hide(self) -> None: ...
    def showMessage(self, title: str, text: str, icon: Any, msecs: int) -> None: ...  # noqa: N802


class HeldNotifier(QObject):
    """Notifies about new held calls in the approvals panel it watches."""

    def __init__(self, window: QWidget, tray: Tray | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.tray = tray  # made on first use when the system has a tray
        self.sent: list[tuple[str, str]] = []  # (call id, text) of each notification
        self._panel: Any = None
        self._last: tuple[Any, str] | None = None  # (proxy connection, call id) a click opens
        if tray is not None:
            tray.messageClicked.connect(self.open_last)

    def watch(self, panel: Any) -> None:
        """Follow ``panel`` (the :class:`~loom_desktop.features.proxy.approvals_panel.ApprovalsPanel`):
        its ``arrived(connection, call)`` is sent once per newly held call."""
        self._panel = panel
        panel.arrived.connect(self._arrived)

    def in_background(self) -> bool:
        window = self.window
        return window.isMinimized() or not window.isActiveWindow()

    def _arrived(self, connection: Any, call: PendingCall) -> None:
        if self.in_background():
            self.notify(connection, call)

    def notify(self, connection: Any, call: PendingCall) -> None:
        """One notification for ``call``: a tray message, else a taskbar alert."""
        label = getattr(connection, "label", "")
        text = (
            f"{call.tool} is waiting for approval (rule {call.rule or '(default)'}) "
            f"on proxy {label}"
        )
        self.sent.append((call.id, text))
        self._last = (connection, call.id)
        tray = self._tray()
        if tray is None:
            QApplication.alert(self.window)
            return
        tray.show()
        tray.showMessage(
            "Loom: tool call held", text, QSystemTrayIcon.MessageIcon.Information, SHOW_MS
        )

    def _tray(self) -> Tray | None:
        if self.tray is None and QSystemTrayIcon.isSystemTrayAvailable():
            from loom_desktop.app import app_icon

            tray = QSystemTrayIcon(app_icon(), self)
            tray.setToolTip("Loom Desktop")
            tray.messageClicked.connect(self.open_last)
            self.tray = tray
        return self.tray

    def open_last(self) -> None:
        """The message was clicked: raise the window and select that call's card."""
        window = self.window
        if window.isMinimized():
            window.showNormal()
        window.raise_()
        window.activateWindow()
        panel = self._panel
        if self._last is None or panel is None:
            return
        connection, call_id = self._last
        if not panel.select(connection, call_id):
            return  # decided meanwhile, or its proxy was stopped
        panel.show()
        panel.raise_()
        panel.list.setFocus()

    def close(self) -> None:
        """Hide the tray icon (the window is closing)."""
        if self.tray is not None:
            self.tray.hide()
