"""The window's control-plane connections and its one approvals panel.

Every proxy the window follows (started here, re-attached, or attached with
Proxy ▸ Attach…) gets a :class:`ProxyConnection`; all of them feed the same
:class:`ApprovalsPanel`, made on first use and hidden when the last proxy goes. Their modules (the control
client: urllib, ssl, its models) are imported with the first proxy, not at the window's
start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QApplication

if TYPE_CHECKING:
    from loom_desktop.features.proxy.approvals_panel import ApprovalsPanel
    from loom_desktop.features.proxy.connection import ProxyConnection


class AttachedProxies(QObject):
    """Owned by the window; ``connections`` is the window's ``proxies`` list; ``on_held(n)``
    when n new calls are held (the window's status bar says so)."""

    def __init__(
        self, window: Any, connections: list[ProxyConnection], on_held: Callable[[int], None]
    ) -> None:
        super().__init__(window)
        self.window = window
        self.connections = connections
        self.on_held = on_held
        self.panel: ApprovalsPanel | None = None

    def approvals(self) -> ApprovalsPanel:
        """The approvals panel (made, docked and watched by the notifier on first use)."""
        if self.panel is None:
            from loom_desktop.features.proxy.approvals_panel import ApprovalsPanel

            win = self.window
            panel = self.panel = ApprovalsPanel(win)
            panel.held.connect(self.on_held)
            panel.held.connect(lambda n: panel.raise_() if n else None)  # before the Runs tab
            # beside the Runs dock as a tab, not in a column of its own: a 1000 px window has
            # room for one side column next to the run (two crushed the Runs list to "Whe…"
            # and pushed the step list's tokens and cost off screen)
            win.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, panel)
            win.notifier.watch(panel)
        return self.panel

    def attach(
        self, port: int, confirm_timeout: float | None = None, run: Any = None
    ) -> ProxyConnection:
        """Follow the proxy on ``port``; its held calls join the panel (``run``: its tab)."""
        from loom_core.proxy.control_client import ControlClient
        from loom_desktop.features.proxy.connection import ProxyConnection

        connection = ProxyConnection(ControlClient(port), confirm_timeout, self.window)
        panel = self.approvals()
        panel.add(connection, run)
        panel.show()
        panel.raise_()
        self.connections.append(connection)
        connection.gone.connect(lambda c=connection: self._gone(c))
        connection.start()
        return connection

    def _gone(self, connection: ProxyConnection) -> None:
        """A followed proxy stopped (one started outside the app, usually): say so and
        stop following it, rather than list it with "connection refused" forever."""
        label = connection.label
        self.detach(connection)
        self.window.show_status(f"proxy {label} stopped; no longer following it", 10_000)

    def detach(self, connection: ProxyConnection) -> None:
        """Stop following ``connection``; the panel hides when it was the last one.
        A connection no longer followed (its proxy was found gone first) is left alone."""
        if connection not in self.connections:
            return
        connection.stop()
        self.connections.remove(connection)
        panel = self.panel
        if panel is not None:
            panel.remove(connection)
            if not panel.connections:
                focused = QApplication.focusWidget()
                panel.hide()
                if focused is not None and panel.isAncestorOf(focused):
                    self._focus_run()  # not whatever widget Qt picks next (the filter box)
        connection.deleteLater()

    def _focus_run(self) -> None:
        view = self.window.current()
        table = getattr(view, "table", None)
        if table is not None:
            table.setFocus()

    def shutdown(self) -> None:
        for connection in list(self.connections):
            connection.stop()
