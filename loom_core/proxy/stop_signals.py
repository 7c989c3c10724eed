"""Which signal stopped the proxy, and which process sent it.

Why: an offline demo's proxy once stopped half a minute before its held call's
timeout, and nothing said who stopped it; the sidecar's ``end`` record only said
that the stop was clean. A signal carries its sender's pid and uid in its siginfo,
so the proxy now keeps them: the ``end`` record gets ``stopped_by`` (see
:meth:`StopCause.record`) and the proxy's last stderr line names the sender.

How: where the platform has ``sigtimedwait`` (Linux, the BSDs), the stop signals
are blocked in every thread *before any other thread starts* (threads inherit the
mask, so none of them can take the signal first) and one thread owned by
:class:`StopSignals` waits for them with ``sigtimedwait``, which returns the
siginfo. It hands the cause to the event loop with ``call_soon_threadsafe``. Each
signal keeps a Python handler while blocked, so an inherited "ignore" (a shell
starts background jobs with SIGINT ignored) cannot make it vanish, and so a thread
that a library started before :meth:`StopSignals.install` (numpy's BLAS starts
some when it is imported: the ``proxy`` command's parser therefore does not import
it) still stops the proxy when it takes the signal; only the sender is then
unknown. Where there is no ``sigtimedwait`` (macOS, Windows) the loop's own signal
handlers are used: the signal is known, its sender is not.

Stop signals: SIGINT (Ctrl-C), SIGTERM (``kill``, the desktop's Stop) and SIGHUP
(the terminal that ran ``loom proxy`` was closed); each finalizes the trace.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STOPPED_REASON = "the proxy was stopped"  # held calls are denied with it at a stop
WAKE_S = 0.2  # how often the waiting thread looks whether it was closed
_SI_KERNEL = 0x80  # Linux's si_code for a signal the kernel sent (a terminal's Ctrl-C)


def stop_signal_numbers() -> tuple[int, ...]:
    """The signals that stop a proxy on this platform."""
    names = ("SIGINT", "SIGTERM", "SIGHUP")
    return tuple(int(getattr(signal, n)) for n in names if hasattr(signal, n))


@dataclass(frozen=True)
class StopCause:
    """One stop signal: its name and, where the platform says, who sent it."""

    signal: str  # "SIGTERM"
    pid: int | None = None  # the sender; 0: the kernel (a terminal); None: not known
    uid: int | None = None
    command: str | None = None  # the sender's command line, read when the signal came

    def record(self) -> dict[str, Any]:
        """The ``stopped_by`` member of the sidecar's ``end`` record."""
        out: dict[str, Any] = {"signal": self.signal}
        if self.pid is not None:
            out.update(pid=self.pid, uid=self.uid)
        if self.command:
            out["command"] = self.command
        return out

    def describe(self) -> str:
        """``SIGTERM from pid 123 (python -m loom_desktop)`` -- for a person."""
        if self.pid is None:
            return f"{self.signal} (this platform does not say who sent it)"
        if self.pid == 0:
            return f"{self.signal} from the kernel (a terminal's Ctrl-C or hang-up)"
        who = f" ({self.command})" if self.command else ""
        return f"{self.signal} from pid {self.pid}{who}"


def _name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def command_of(pid: int) -> str | None:
    """The command line of a live process, where ``/proc`` tells it (else None)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    return " ".join(words)[:300] or None


def cause_from_siginfo(info: Any) -> StopCause:
    """A :class:`StopCause` from ``signal.struct_siginfo``."""
    pid = 0 if info.si_code == _SI_KERNEL else int(info.si_pid)
    return StopCause(_name(info.si_signo), pid, int(info.si_uid), command_of(pid) if pid else None)


class StopSignals:
    """Waits for a stop signal; :meth:`install` first (main thread), then :meth:`wait`.

    The owner calls :meth:`close` when it has finished: the waiting thread is joined
    and the signal mask and handlers are what they were before.
    """

    def __init__(self) -> None:
        self.cause: StopCause | None = None
        self.signals = stop_signal_numbers()
        self._lock = threading.Lock()
        self._notify: Callable[[], object] | None = None
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._handlers: dict[int, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None  # the fallback's

    @property
    def sender_known(self) -> bool:
        """Whether this platform says who sent a signal (``sigtimedwait``)."""
        return hasattr(signal, "sigtimedwait") and hasattr(signal, "pthread_sigmask")

    def install(self) -> None:
        """Block the stop signals and start the waiting thread. Call it on the main
        thread before any other thread exists. Without ``sigtimedwait``: nothing yet."""
        if not self.sender_known or self._thread is not None:
            return
        for sig in self.signals:  # a handler, never "ignore": see the module docstring
            self._handlers[sig] = signal.signal(sig, self._handler)
        signal.pthread_sigmask(signal.SIG_BLOCK, self.signals)
        self._thread = threading.Thread(target=self._wait_thread, name="loom-stop-signals")
        self._thread.start()

    def _wait_thread(self) -> None:
        while not self._closed.is_set():
            info = signal.sigtimedwait(self.signals, WAKE_S)
            if info is not None and not self._closed.is_set():
                self._got(cause_from_siginfo(info))

    def _handler(self, signum: int, _frame: Any) -> None:
        """A thread that does not block the signal took it: the sender is unknown."""
        self._got(StopCause(_name(signum)))

    def _got(self, cause: StopCause) -> None:
        with self._lock:
            if self.cause is None:
                self.cause = cause  # the first signal is the one that stopped the proxy
            notify = self._notify
        if notify is not None:
            notify()

    async def wait(self) -> StopCause:
        """Return the cause once a stop signal came (at once when one already had)."""
        loop = asyncio.get_running_loop()
        came = asyncio.Event()
        with self._lock:
            self._notify = lambda: loop.call_soon_threadsafe(came.set)
            if self.cause is not None:
                came.set()
        if self._thread is None:
            self._handle_on(loop)
        await came.wait()
        assert self.cause is not None
        return self.cause

    def _handle_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """The fallback: the loop's signal handlers (the sender stays unknown)."""
        self._loop = loop
        for sig in self.signals:
            try:
                loop.add_signal_handler(sig, self._got, StopCause(_name(sig)))
            except (NotImplementedError, RuntimeError):  # Windows: a plain handler
                self._handlers[sig] = signal.signal(
                    sig, lambda s, _f: loop.call_soon_threadsafe(self._got, StopCause(_name(s)))
                )

    def close(self) -> None:
        """Stop waiting; restore the mask and the handlers. Idempotent."""
        self._closed.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, self.signals)
        if self._loop is not None:
            for sig in self.signals:
                try:
                    self._loop.remove_signal_handler(sig)
                except (NotImplementedError, RuntimeError, ValueError):
                    pass
            self._loop = None
        for sig, previous in self._handlers.items():
            signal.signal(sig, previous)
        self._handlers.clear()
