"""A connection to one proxy's control plane: its event stream, or polling as a fallback.

Works with our proxy and with loom-harness's ``loom proxy`` (same endpoints and
token file). Our proxy pushes held calls and decisions over ``GET /loom/events``
(:mod:`loom_core.proxy.events`): a worker thread owned by this object reads the
stream and hands each event to the GUI thread, so a held call shows up at once and
nothing is requested while nothing happens. loom-harness's proxy has no stream (it
forwards the GET upstream, which answers 404): any answer that is not a stream
switches this connection to polling ``/pending`` every ``POLL_MS``, as before. A
stream that drops while the proxy lives is reopened with back-off; its ``hello``
re-syncs the list. Each decision runs in a :class:`Task` of its own, so two quick
decisions both arrive (one task would cancel the first run's report when the second
starts); a call with a decision in flight takes no other; every failure is reported.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from loom_core.proxy.control_client import (
    ControlClient,
    ControlError,
    NoEventStream,
    PendingCall,
    read_token,
)
from loom_desktop.infra.workers import Task

POLL_MS = 400
TICK_MS = 1000  # between events, held calls' ages move on locally (for the countdowns)
BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0)  # waits before reopening a stream, then 5 s each
JOIN_S = 3.0  # the reader wakes every POLL_S (0.25 s) to see it was stopped


class ProxyConnection(QObject):
    """Emits ``pending_changed(list[PendingCall])``; :meth:`decide` answers one call.

    ``mode`` is ``connecting``, ``stream`` (our proxy) or ``poll`` (loom-harness's);
    ``exchange(dict)`` carries our proxy's recorded-exchange events.
    """

    pending_changed = Signal(object)
    decided = Signal(str)
    deciding_changed = Signal()  # a decision was sent, or its answer (or failure) came
    decide_failed = Signal(str)  # why a decision did not take (also sent as ``error``)
    error = Signal(str)
    gone = Signal()  # the proxy stopped: nothing answers and its token file was removed
    exchange = Signal(object)
    _arrived = Signal(object)  # reader thread -> GUI thread (queued)

    def __init__(
        self,
        client: ControlClient,
        confirm_timeout: float | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.client = client
        self.confirm_timeout = confirm_timeout  # for countdowns; None when unknown
        self.mode = "connecting"
        self._calls: dict[str, tuple[PendingCall, float]] = {}  # id -> (call, seen at)
        self._reader: threading.Thread | None = None
        self._stop_reader = threading.Event()
        self._arrived.connect(self._on_event, Qt.ConnectionType.QueuedConnection)
        self._poll = Task(self)
        self._poll.finished.connect(self.pending_changed)
        self._poll.failed.connect(self._failed)
        self._deciding: dict[str, Task] = {}  # call id -> its decision in flight
        self._timer = QTimer(self, interval=POLL_MS)
        self._timer.timeout.connect(self.poll)
        self._tick = QTimer(self, interval=TICK_MS)
        self._tick.timeout.connect(self._emit_pending)

    @property
    def label(self) -> str:
        return f"{self.client.host}:{self.client.port}"

    @property
    def polling(self) -> bool:
        return self._timer.isActive()

    def start(self) -> None:
        """Open the event stream (falls back to polling if the proxy has none)."""
        if self._reader is not None:
            return
        self._stop_reader = threading.Event()
        self._reader = threading.Thread(
            target=self._read,
            args=(self._stop_reader,),
            name=f"loom-proxy-events-{self.client.port}",
            daemon=True,
        )
        self._reader.start()

    def stop(self) -> None:
        """Stop the reader thread (bounded join), the timers and the tasks."""
        self._timer.stop()
        self._tick.stop()
        self._stop_reader.set()
        self._poll.cancel()
        for task in self._deciding.values():
            task.cancel()  # the requests end by their own timeout; their reports are dropped
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.join(JOIN_S)

    # -- the stream (reader thread) -------------------------------------------------
    def _read(self, stop: threading.Event) -> None:
        """Read events until stopped; reopen a dropped stream with back-off."""
        failures = 0
        while not stop.is_set():
            try:
                for event in self.client.events(stop):
                    failures = 0
                    self._send(event)
            except NoEventStream:
                if not stop.is_set():
                    self._send({"event": "_poll"})
                return
            except ControlError as exc:
                if not stop.is_set():
                    self._send({"event": "_error", "data": str(exc)})
            if stop.wait(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)]):
                return
            failures += 1

    def _send(self, event: dict[str, Any]) -> None:
        try:
            self._arrived.emit(event)
        except RuntimeError:  # the connection was deleted with its window
            self._stop_reader.set()

    # -- events (GUI thread) ----------------------------------------------------------
    def _on_event(self, event: dict[str, Any]) -> None:
        if self._stop_reader.is_set():
            return  # stopped: a late event changes nothing
        name, data = event.get("event"), event.get("data")
        if name == "hello" and isinstance(data, dict):
            self.mode = "stream"
            self._timer.stop()
            self._calls = {}
            for item in data.get("pending") or []:
                self._upsert(item)
            self._emit_pending()
        elif name == "pending" and isinstance(data, dict):
            self._upsert(data)
            self._emit_pending()
        elif name == "decided" and isinstance(data, dict):
            self._calls.pop(str(data.get("id")), None)
            self._emit_pending()
        elif name == "exchange":
            self.exchange.emit(data)
        elif name == "_poll":
            self.mode = "poll"
            self.poll()
            self._timer.start()
        elif name == "_error":
            if self._stopped():
                self.gone.emit()
            else:
                self.error.emit(f"proxy {self.label}: {data}")

    def _stopped(self) -> bool:
        """Whether the proxy stopped for good, not just dropped the stream: a proxy that
        stops cleanly removes the token file it wrote (a crashed one leaves it, and the
        stream is retried as before; a proxy seen without a token never counts)."""
        token = self.client.token
        return token is not None and read_token(self.client.port) != token

    def _upsert(self, item: dict[str, Any]) -> None:
        try:
            call = PendingCall.model_validate(item)
        except ValueError:
            return
        self._calls[call.id] = (call, time.monotonic())

    def _emit_pending(self) -> None:
        """The held calls, their ages advanced locally since the proxy reported them."""
        now = time.monotonic()
        calls = [
            call.model_copy(update={"age_s": round(call.age_s + now - seen, 1)})
            for call, seen in self._calls.values()
        ]
        if calls and not self._tick.isActive():
            self._tick.start()
        elif not calls:
            self._tick.stop()
        self.pending_changed.emit(calls)

    # -- polling (loom-harness's proxy) and decisions ---------------------------------
    def poll(self) -> None:
        if not self._poll.running:
            client = self.client
            self._poll.start(lambda _ctx: client.pending())

    def deciding(self, call_id: str) -> bool:
        """Whether a decision on ``call_id`` was sent and has not been answered yet."""
        return call_id in self._deciding

    def decide(self, call_id: str, approve: bool, **extra: Any) -> bool:
        """Approve or deny ``call_id``; ``extra`` may hold reason / edited_input / always_allow.

        Returns False (nothing sent) while an earlier decision on the same call is in
        flight. Decisions on different calls run side by side, each reported.
        """
        if call_id in self._deciding:
            return False
        client = self.client

        def run(_ctx: Any) -> str:
            client.decide(call_id, approve, **extra)
            return call_id

        task = Task(self)
        task.finished.connect(lambda _result: self._after_decide(call_id))
        task.failed.connect(lambda exc: self._decide_failed(call_id, exc))
        self._deciding[call_id] = task
        task.start(run)
        self.deciding_changed.emit()
        return True

    def _settle(self, call_id: str) -> None:
        task = self._deciding.pop(call_id, None)
        if task is not None:
            task.deleteLater()
            self.deciding_changed.emit()

    def _after_decide(self, call_id: str) -> None:
        self._settle(call_id)
        self.decided.emit(call_id)
        if self.mode != "stream":
            self.poll()  # the stream brings the ``decided`` event by itself

    def _decide_failed(self, call_id: str, exc: object) -> None:
        self._settle(call_id)
        self._failed(exc)
        self.decide_failed.emit(f"the decision was not taken: {exc}")

    def _failed(self, exc: object) -> None:
        if isinstance(exc, ControlError):
            self.error.emit(f"proxy {self.label}: {exc}")
        else:
            self.error.emit(f"proxy {self.label}: {type(exc).__name__}: {exc}")
