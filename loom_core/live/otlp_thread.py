"""An OTLP receiver on a thread of its own, for a process whose main thread is busy (the GUI).

Why a thread with its own event loop: the app's main thread runs Qt, and the receiver is
an asyncio server. :class:`ReceiverThread` owns the thread, the loop and the receiver;
:meth:`ReceiverThread.start` returns once the port is bound (or raises what binding
raised), :meth:`ReceiverThread.stop` closes the receiver and joins the thread, bounded.
The store's callbacks run on the receiver's thread: a GUI relays them to its own thread.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future

from loom_core.live.otlp_receiver import OtlpReceiver, ReceiverConfig, start_receiver
from loom_core.live.otlp_store import TraceStore

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0


class ReceiverThread:
    """One receiver on one owned thread; see the module docstring."""

    def __init__(self, config: ReceiverConfig, store: TraceStore | None = None) -> None:
        self.config = config
        self.store = store if store is not None else TraceStore(config.save)
        self.receiver: OtlpReceiver | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="otlp-receiver", daemon=True
        )

    @property
    def running(self) -> bool:
        return self.receiver is not None and self._thread.is_alive()

    def start(self) -> OtlpReceiver:
        """Bind and listen; ValueError (not loopback) or OSError (port taken, bad folder)."""
        self._thread.start()
        future: Future[OtlpReceiver] = asyncio.run_coroutine_threadsafe(
            start_receiver(self.config, self.store), self._loop
        )
        try:
            self.receiver = future.result(START_TIMEOUT)
        except BaseException:
            self._halt()
            raise
        return self.receiver

    def stop(self) -> bool:
        """Close the receiver and end the thread (idempotent); True when the thread ended."""
        if not self._thread.is_alive():
            return True
        if self.receiver is not None:
            receiver, self.receiver = self.receiver, None
            future = asyncio.run_coroutine_threadsafe(receiver.close(), self._loop)
            try:
                future.result(STOP_TIMEOUT)
            except Exception:  # noqa: BLE001 - a close that failed still ends the thread
                pass
        return self._halt()

    def _halt(self) -> bool:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STOP_TIMEOUT)
        ended = not self._thread.is_alive()
        if ended:
            self._loop.close()
        return ended
