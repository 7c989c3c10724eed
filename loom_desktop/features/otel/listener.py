"""The app's OTLP receiver: owned here, on its own thread, announcing each new trace.

Why a QObject around :class:`loom_core.live.otlp_thread.ReceiverThread`: the receiver's
store calls back on the receiver's thread; a relay living in the GUI thread turns each
call into a queued signal, so whatever opens the tab runs on the GUI thread. Binding
(a socket and a folder) is quick, so :meth:`OtelListener.start` runs on the GUI thread and
raises what binding raised; :meth:`OtelListener.stop` closes and joins, bounded.

The receiver (aiohttp and the OTLP protobuf classes, about 0.3 s of imports) is imported
when the user starts listening, not when the window builds its menu: that was on the path
to the window's first paint.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from loom_core.runs_dir import runs_dir

if TYPE_CHECKING:
    from loom_core.live.otlp_thread import ReceiverThread

DEFAULT_PORT = 4318


def default_folder() -> Path:
    """Where received traces go unless the user picks a folder: the per-user runs folder."""
    return runs_dir() / "otlp"


class _Relay(QObject):
    """Lives in the GUI thread; the receiver's thread only emits."""

    arrived = Signal(str, str)  # trace id, file


class OtelListener(QObject):
    """At most one receiver at a time; ``trace_arrived`` for each new trace's file."""

    trace_arrived = Signal(str, str)  # trace id, path (on the GUI thread)
    state_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._relay = _Relay(self)
        self._relay.arrived.connect(self._arrived)
        self._thread: ReceiverThread | None = None
        self.traces: list[tuple[str, str]] = []  # (trace id, path) received since start

    @property
    def listening(self) -> bool:
        return self._thread is not None and self._thread.running

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:PORT`` while listening, else empty."""
        receiver = self._thread.receiver if self._thread is not None else None
        return receiver.endpoint if receiver is not None else ""

    @property
    def folder(self) -> Path | None:
        return self._thread.config.save if self._thread is not None else None

    def start(self, port: int, folder: Path) -> str:
        """Listen on 127.0.0.1:``port`` (0: any free port) filing traces in ``folder``;
        returns the endpoint. OSError (port taken, folder unusable) leaves it stopped."""
        from loom_core.live.otlp_receiver import ReceiverConfig
        from loom_core.live.otlp_thread import ReceiverThread

        self.stop()
        thread = ReceiverThread(ReceiverConfig(folder, port=port))
        thread.store.on_new_trace = lambda trace_id, path: self._relay.arrived.emit(
            trace_id, str(path)
        )
        thread.start()
        self._thread = thread
        self.traces.clear()
        self.state_changed.emit()
        return self.endpoint

    def stop(self) -> None:
        """Stop listening (idempotent); files already written stay as they are."""
        if self._thread is None:
            return
        thread, self._thread = self._thread, None
        thread.stop()
        self.state_changed.emit()

    def _arrived(self, trace_id: str, path: str) -> None:
        if self._thread is None:  # queued before a stop: not opened any more
            return
        self.traces.append((trace_id, path))
        self.trace_arrived.emit(trace_id, path)
