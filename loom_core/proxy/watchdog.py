"""One watchdog for every in-flight upstream read, in place of a timer per read.

``--upstream-timeout`` bounds connecting to the upstream (aiohttp's ``sock_connect``:
one timer per new connection, none on a pooled one) and every wait for upstream
bytes: the response's head once the request is sent, then each gap between reads.
aiohttp's ``sock_read`` enforces the second by cancelling and re-arming a loop timer
on every read -- some fifty times for a fifty-event stream, a cost a profile of the
proxy showed. Here one periodic check looks at every exchange waiting for its
upstream and fails those that made no progress for the timeout exactly as
``sock_read`` fails them (a ``SocketTimeoutError`` set on the connection and the
body stream), so the request path is unchanged: a 504 before the answer, a torn
stream after it.

When: checked every ``timeout / 8`` (10 ms to 1 s); progress is the body's byte
count or the head's arrival, noticed at the next check. A wait is cut off once it
has been seen without progress for ``timeout``: never before the timeout has passed
since the last byte, and at most two check periods after (1.25x the timeout for
timeouts up to 8 s). An upstream that has sent everything (end of body) is no longer
watched. Time while our own client has bytes it has not taken yet (a slow reader
holding the relay) does not count, as aiohttp's timer stops while it has paused
reading for a full buffer.

How an exchange is watched: the handler opens :meth:`Watchdog.watching` around its
upstream call; :class:`WatchedResponse` (the session's ``response_class``) starts the
watch when aiohttp starts waiting for the head, after the request was sent, as
``sock_read`` starts then. A request made outside ``watching`` is not watched.

The same moment serves the handler: ``watching(client, on_sent)`` has ``on_sent``
called soon after the request went upstream (scheduled then, so it runs after the
task that writes the body), while the upstream works -- the recording proxy decodes
the request there, off the client's wait (:meth:`.server.ProxyServer._forward`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import aiohttp

_TimeoutError: type[Exception] = getattr(aiohttp, "SocketTimeoutError", aiohttp.ServerTimeoutError)
_CURRENT: ContextVar[Watch | None] = ContextVar("loom_upstream_watch", default=None)


class Watch:
    """One exchange's wait for its upstream (see the module docstring)."""

    __slots__ = ("_dog", "client", "response", "protocol", "seen", "since", "on_sent")

    def __init__(
        self,
        dog: Watchdog,
        client: asyncio.WriteTransport | None,
        on_sent: Callable[[], None] | None = None,
    ) -> None:
        self._dog = dog
        self.on_sent = on_sent  # called soon once the request is sent (module docstring)
        self.client = client  # our client's transport: unsent bytes there pause the clock
        self.response: aiohttp.ClientResponse | None = None
        self.protocol: Any = None  # aiohttp's ResponseHandler of the connection
        self.seen: int | None = -1  # progress marker: the body's byte count, -1 before the head
        self.since = 0.0  # loop time from which no progress was seen

    def progress(self) -> int | None:
        """The body's byte count; -1 before the head; None once the body has ended."""
        content = self.response.content if self.response is not None else None
        if content is None:
            return -1
        return None if content.is_eof() else content.total_bytes

    def paused(self) -> bool:
        """Our client has not taken all we wrote: the relay may be waiting for it."""
        client = self.client
        if client is None:
            return False
        return bool(client.get_write_buffer_size())

    def stop(self) -> None:
        """The upstream answered in full (or failed): its wait is over."""
        self._dog.forget(self)
        self.response = self.protocol = None


class Watchdog:
    """Cuts off upstream waits that made no progress for ``timeout`` seconds."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.period = min(1.0, max(0.01, timeout / 8))
        self._watches: set[Watch] = set()
        self._handle: asyncio.TimerHandle | None = None

    @contextmanager
    def watching(
        self, client: asyncio.WriteTransport | None, on_sent: Callable[[], None] | None = None
    ) -> Iterator[Watch]:
        """The current task's upstream call is watched inside this block; ``client``
        is the transport of the client it answers (see :meth:`Watch.paused`);
        ``on_sent`` runs soon after the request went upstream (module docstring)."""
        watch = Watch(self, client, on_sent)
        token = _CURRENT.set(watch)
        try:
            yield watch
        finally:
            _CURRENT.reset(token)
            watch.stop()

    def begin(self, watch: Watch, response: aiohttp.ClientResponse, protocol: Any) -> None:
        """The request is sent: time the wait for its head from now."""
        loop = asyncio.get_running_loop()
        watch.response, watch.protocol = response, protocol
        watch.seen, watch.since = watch.progress(), loop.time()
        self._watches.add(watch)
        if watch.on_sent is not None:
            loop.call_soon(watch.on_sent)
        if self._handle is None:
            self._handle = loop.call_later(self.period, self._check)

    def forget(self, watch: Watch) -> None:
        self._watches.discard(watch)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._watches.clear()

    def _check(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        for watch in list(self._watches):
            seen = watch.progress()
            if seen is None:
                self.forget(watch)  # the upstream sent it all: nothing left to wait for
            elif seen != watch.seen or watch.paused():
                watch.seen, watch.since = seen, now
            elif now - watch.since >= self.timeout:
                _cut_off(watch)
        self._handle = loop.call_later(self.period, self._check) if self._watches else None


def _cut_off(watch: Watch) -> None:
    """What aiohttp's ``sock_read`` timer does, on one watched exchange."""
    exc = _TimeoutError("Timeout on reading data from socket")
    protocol, response = watch.protocol, watch.response
    watch.stop()
    if protocol is not None:
        protocol.set_exception(exc)  # a wait for the head fails; the connection is not reused
    if response is not None and response.content is not None:
        response.content.set_exception(exc)  # a read of the body fails


class WatchedResponse(aiohttp.ClientResponse):
    """aiohttp's response, watched from the moment it waits for its head."""

    async def start(self, connection: Any) -> WatchedResponse:
        watch = _CURRENT.get()
        if watch is not None:
            watch._dog.begin(watch, self, connection.protocol)
        await super().start(connection)
        return self
