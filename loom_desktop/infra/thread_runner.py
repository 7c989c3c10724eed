"""One long run on a thread its QObject owns: a cancel token, a bounded stop, a relay.

Why not :class:`~.workers.Task`: a fork or a heal can run for minutes, talks to a
provider or an agent process that must be told to stop (a :class:`CancelToken`),
and must be joined before the app exits; a pool task can be neither cancelled
mid-call nor joined. Why a relay: the thread only *emits* on a QObject living in
the GUI thread, so the runner's slots (and everything connected to its signals)
run there, never on the worker thread.

A subclass sets ``relay_type`` (a :class:`Relay` with its extra signals), names its
thread and does the work in :meth:`_work`, ending with ``self._relay.done.emit(outcome)``
(kept as ``outcome``, announced by ``finished``) or its own failure signal (then it
widens :attr:`ended`).
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import QObject, Signal

from loom_core.providers.base import CancelToken

STOP_JOIN_S = 15.0  # a cancelled agent gets SIGTERM, then SIGKILL after 5 s


class Relay(QObject):
    """Lives in the GUI thread; the run's thread only emits (queued to the runner's slots)."""

    done = Signal(object)


def failure_cause(exc: BaseException) -> str:
    """The words for a failed run: a LoadError's cause (the caller names the file), else
    the exception's message, else its type."""
    from loom_core.errors import LoadError

    return exc.cause if isinstance(exc, LoadError) else str(exc) or type(exc).__name__


class ThreadRunner(QObject):
    """Owns one worker thread and its :class:`CancelToken`; see the module docstring."""

    relay_type: type[Relay] = Relay
    finished = Signal(object)  # the outcome, on the GUI thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.token = CancelToken()
        self.outcome: Any = None
        self._relay = self.relay_type(self)
        self._relay.done.connect(self._on_done)
        self._thread: threading.Thread | None = None

    @property
    def ended(self) -> bool:
        """The outcome reached the GUI thread."""
        return self.outcome is not None

    @property
    def running(self) -> bool:
        """The thread was started, is alive and its outcome has not arrived yet."""
        return self._thread is not None and self._thread.is_alive() and not self.ended

    def thread_name(self) -> str:
        """The worker thread's name (tests and thread dumps find a run by it)."""
        raise NotImplementedError

    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, daemon=True, name=self.thread_name())
        self._thread.start()

    def cancel(self) -> None:
        """Ask the run to stop (cooperatively, through its token); returns at once."""
        self.token.cancel()

    def stop(self, timeout: float = STOP_JOIN_S) -> bool:
        """Cancel and wait (bounded) for the thread; True when it ended."""
        self.cancel()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _on_done(self, outcome: object) -> None:
        """GUI thread: keep the outcome and announce it."""
        self.outcome = outcome
        self.finished.emit(outcome)

    def _work(self) -> None:
        """The run's thread: do the work, then emit the outcome through the relay."""
        raise NotImplementedError
