"""A connection to one proxy's control plane, polled off the GUI thread.

Works with our proxy and with loom-harness's ``loom proxy`` (same endpoints and
token file). Polling is one request at a time through a :class:`Task`; decisions
go through another, and every failure is reported, never swallowed.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from loom_core.control_client import ControlClient, ControlError

from .workers import Task

POLL_MS = 400


class ProxyConnection(QObject):
    """Emits ``pending_changed(list[PendingCall])``; :meth:`decide` answers one call."""

    pending_changed = Signal(object)
    decided = Signal(str)
    error = Signal(str)

    def __init__(self, client: ControlClient, confirm_timeout: float | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.client = client
        self.confirm_timeout = confirm_timeout  # for countdowns; None when unknown
        self._poll = Task(self)
        self._poll.finished.connect(self.pending_changed)
        self._poll.failed.connect(self._failed)
        self._decide = Task(self)
        self._decide.finished.connect(self._after_decide)
        self._decide.failed.connect(self._failed)
        self._timer = QTimer(self, interval=POLL_MS)
        self._timer.timeout.connect(self.poll)

    @property
    def label(self) -> str:
        return f"{self.client.host}:{self.client.port}"

    def start(self) -> None:
        self.poll()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._poll.cancel()
        self._decide.cancel()

    def poll(self) -> None:
        if not self._poll.running:
            client = self.client
            self._poll.start(lambda _ctx: client.pending())

    def decide(self, call_id: str, approve: bool, **extra: Any) -> None:
        """Approve or deny ``call_id``; ``extra`` may hold reason / edited_input / always_allow."""
        client = self.client

        def run(_ctx: Any) -> str:
            client.decide(call_id, approve, **extra)
            return call_id

        self._decide.start(run)

    def _after_decide(self, call_id: object) -> None:
        self.decided.emit(str(call_id))
        self.poll()

    def _failed(self, exc: object) -> None:
        if isinstance(exc, ControlError):
            self.error.emit(f"proxy {self.label}: {exc}")
        else:
            self.error.emit(f"proxy {self.label}: {type(exc).__name__}: {exc}")
