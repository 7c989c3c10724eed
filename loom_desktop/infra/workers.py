"""One background-task abstraction that always reports ``finished`` or ``failed``.

Why this shape: a plain core function runs on the global thread pool; its
outcome is re-emitted by a relay QObject that lives in the GUI thread, so slots
always run there (a lambda or plain function connected to a worker-thread signal
would run in the worker). Starting a new task for the same purpose cancels the
old one: its result is dropped by generation number, and a cooperative
``cancelled()`` callable is handed to the function so it can stop early.
Functions receive a :class:`TaskContext` to report progress and partial results.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

# Progress reaches the window at most this often (the last report always does): a big
# run's load reports every chunk it decodes (a thousand at 1,000,000 effects), and each
# report is a turn of the window's event loop that must take the interpreter lock back
# from the loader (such turns were in the 40-54 ms stalls, with 3-5 ms of the window's
# own CPU in each).
PROGRESS_EVERY_S = 0.1


class _Relay(QObject):
    """Carries results from the pool thread to the GUI thread (queued connections)."""

    done = Signal(int, object)
    error = Signal(int, object)
    progress = Signal(int, int, int)
    partial = Signal(int, object)


@dataclass(frozen=True)
class TaskContext:
    """What a task function may do besides returning: report and check for cancellation."""

    progress: Callable[[int, int], None]
    partial: Callable[[object], None]
    cancelled: Callable[[], bool]


def _done(_ctx: object) -> None:
    """What a runnable holds once it ran (its function and what that held are let go)."""


class _Runnable(QRunnable):
    def __init__(
        self, relay: _Relay, generation: int, fn: Callable[..., Any], cancel: threading.Event
    ) -> None:
        super().__init__()
        self.relay, self.generation, self.fn, self.cancel = relay, generation, fn, cancel
        self.setAutoDelete(True)

    def run(self) -> None:
        last = [-PROGRESS_EVERY_S]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if done < total and now - last[0] < PROGRESS_EVERY_S:
                return  # a bar moved more often than a person reads it only costs the window
            last[0] = now
            if not self.cancel.is_set():
                with contextlib.suppress(RuntimeError):  # the owner was deleted
                    self.relay.progress.emit(self.generation, done, total)

        def partial(value: object) -> None:
            if not self.cancel.is_set():
                self._emit(self.relay.partial, value)

        fn, self.fn = self.fn, _done  # the pool may keep this object: not what fn holds
        try:
            result = fn(TaskContext(progress, partial, self.cancel.is_set))
        except BaseException as exc:  # noqa: BLE001 - every failure must be reported
            self._emit(self.relay.error, exc)
            return
        finally:
            del fn
        self._emit(self.relay.done, result)

    def _emit(self, signal: Any, value: object) -> None:
        """Report to the owner -- unless it was deleted meanwhile (a tab or dialog closed
        while this ran): then nobody is waiting and the result is dropped."""
        try:
            signal.emit(self.generation, value)
        except RuntimeError:
            pass


class Task(QObject):
    """Runs one function at a time off the GUI thread; newer runs supersede older ones.

    ``fn`` is called as ``fn(context)`` with a :class:`TaskContext`. Exactly one
    of ``finished(result)`` / ``failed(exception)`` is emitted per run that was
    not superseded, possibly after ``partial(value)`` previews; ``running`` tells
    whether a run is outstanding.
    """

    finished = Signal(object)
    failed = Signal(object)
    progressed = Signal(int, int)
    partial = Signal(object)

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._relay = _Relay(self)
        self._relay.done.connect(self._on_done)
        self._relay.error.connect(self._on_error)
        self._relay.progress.connect(self._on_progress)
        self._relay.partial.connect(self._on_partial)
        self._generation = 0
        self._cancel = threading.Event()
        self.running = False

    def start(self, fn: Callable[..., Any]) -> None:
        """Cancel any outstanding run and start ``fn`` on the pool."""
        self.cancel()
        self._generation += 1
        self._cancel = threading.Event()
        self.running = True
        self._pool.start(_Runnable(self._relay, self._generation, fn, self._cancel))

    def cancel(self) -> None:
        """Ask the outstanding run to stop; its result, if any, is dropped."""
        self._cancel.set()
        self.running = False

    def _on_done(self, generation: int, result: object) -> None:
        if generation == self._generation and self.running:
            self.running = False
            self.finished.emit(result)

    def _on_error(self, generation: int, exc: object) -> None:
        if generation == self._generation and self.running:
            self.running = False
            self.failed.emit(exc)

    def _on_partial(self, generation: int, value: object) -> None:
        if generation == self._generation and self.running:
            self.partial.emit(value)

    def _on_progress(self, generation: int, done: int, total: int) -> None:
        if generation == self._generation and self.running:
            self.progressed.emit(done, total)


def wait_for_pool(timeout_ms: int = 10000) -> bool:
    """Block until the global pool is idle (shutdown paths and tests)."""
    return QThreadPool.globalInstance().waitForDone(timeout_ms)
