"""SIGINT, SIGTERM, SIGHUP and SIGQUIT close the window as its close button does.

Why: the app's proxies and the demo's agent run in sessions of their own
(:mod:`loom_desktop.infra.sessions`), so a Ctrl-C or a hang-up of the terminal that
started the app no longer reaches them. Their owner must then stop them: the
window's close stops every proxy it started (finalizing the trace, after denying
the calls still held), the demo and every worker. Without this, the default
actions would end the app at once and leave its children running.

How: Python's C-level handler writes the signal's number to a socket
(``signal.set_wakeup_fd``); a :class:`QSocketNotifier` on the other end wakes the
Qt event loop, which then calls ``on_signal`` on the GUI thread. No timer polls.
"""

from __future__ import annotations

import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QSocketNotifier


def quit_signal_numbers() -> tuple[int, ...]:
    names = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
    return tuple(int(getattr(signal, n)) for n in names if hasattr(signal, n))


class QuitSignals(QObject):
    """Calls ``on_signal(name)`` on the GUI thread for each quit signal; :meth:`close` undoes it."""

    def __init__(self, on_signal: Callable[[str], object], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.on_signal = on_signal
        self.received: list[str] = []
        self._handlers: dict[int, Any] = {}
        self._previous_fd: int | None = None
        self._read, self._write = socket.socketpair()
        for end in (self._read, self._write):
            end.setblocking(False)
        try:
            self._previous_fd = signal.set_wakeup_fd(self._write.fileno())
        except ValueError:  # not the main thread: nothing to install
            self._close_sockets()
            return
        for sig in quit_signal_numbers():
            self._handlers[sig] = signal.signal(sig, _count_only)
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)

    @property
    def installed(self) -> bool:
        return self._previous_fd is not None

    def _drain(self) -> None:
        try:
            data = self._read.recv(64)
        except OSError:
            return
        for number in data:
            if number in self._handlers:
                name = signal.Signals(number).name
                self.received.append(name)
                _notice(f"loom-desktop: {name} received; closing")
                self.on_signal(name)

    def close(self) -> None:
        """Restore the handlers and the previous wakeup fd. Idempotent."""
        if self._previous_fd is None:
            return
        self._notifier.setEnabled(False)
        for sig, previous in self._handlers.items():
            signal.signal(sig, previous)
        self._handlers.clear()
        signal.set_wakeup_fd(self._previous_fd)
        self._previous_fd = None
        self._close_sockets()

    def _close_sockets(self) -> None:
        self._read.close()
        self._write.close()


def _notice(line: str) -> None:
    """Say on stderr why the window closes, if stderr still takes it.

    Why: a hang-up usually means the terminal that started the app was closed; its
    stderr is then a hung-up tty where every write fails (EIO). The notice once
    raised there, so the window was never closed: the app, its proxies and the
    demo's agent lived on, and a later ``kill`` did nothing either.
    """
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a hung-up terminal, a closed pipe or file
        pass


def _count_only(_signum: int, _frame: Any) -> None:
    """The C handler already wrote the number to the wakeup socket: nothing else to do."""
