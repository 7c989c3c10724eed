"""``GET /loom/events``: the proxy's event stream (ours; loom-harness has none, it polls).

Why a push stream: a GUI that polls ``/loom/shield/pending`` learns of a held call
up to a poll late and costs a request per poll forever; here every subscriber hears
of a held call, a decision and a recorded exchange the moment they happen.

Format: ``text/event-stream``; each event is ``event: <name>\\ndata: <one-line JSON>\\n\\n``
and a ``: keep-alive`` comment is sent after ``keepalive`` seconds of silence:

* ``hello`` first, on connect: ``{"proxy": "loom_core", "version": 1, "shield": bool,
  "exchanges": N, "pending": [...]}`` -- the list ``GET /loom/shield/pending`` gives;
* ``pending``: a call was held (or a chain approval moved on): one entry of that list;
* ``decided``: ``{"id", "tool", "decision": approve|deny|timeout|client-gone, "via"
  [, "by"][, "reason"][, "edited_input"], "shield_event": <the §1.6 entry recorded, or
  null when the client left and nothing is recorded>}``;
* ``exchange``: a recorded exchange: ``{"n", "path", "dialect", "model",
  "shield_events", "effects", "new_effects", "exchanges"}`` (totals after it).

Access: the control plane's checks (loopback ``Host``, then ``x-loom-token``) when a
shield is active; without one there is no token and, like loom-harness's
``/loom/live/state``, the stream is open to loopback callers (nothing to decide).
A subscriber gets a bounded queue; one that falls ``queue_size`` events behind (it
does not read) is dropped -- its connection aborted -- so it can never hold the
proxy up. On shutdown (the app's ``on_shutdown``, before in-flight requests are
awaited) every stream ends cleanly.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from loom_core.proxy.control import loopback_host
from loom_core.proxy.scrub import scrub_value
from loom_core.proxy.upstream import json_error

EVENTS = "/loom/events"
KEEPALIVE = 15.0
QUEUE_SIZE = 256


@dataclass(eq=False)
class _Subscriber:
    queue: asyncio.Queue[bytes | None]
    transport: Any
    writing: bool = False


def frame(name: str, data: Any) -> bytes:
    """One SSE event (json.dumps never emits a raw newline)."""
    return f"event: {name}\ndata: {json.dumps(data, default=str)}\n\n".encode()


class _ExchangeFeed:
    """The session listener feeding a hub. ``wanted`` only while someone subscribes: the
    session then does not even build the summary, which is on every exchange's way to
    its client (:meth:`.session.RecordingSession.record`)."""

    __slots__ = ("hub",)

    def __init__(self, hub: EventHub) -> None:
        self.hub = hub

    @property
    def wanted(self) -> bool:
        return bool(self.hub.subscribers) and not self.hub.closed

    def __call__(self, summary: dict[str, Any]) -> None:
        self.hub.publish("exchange", summary)


@dataclass(eq=False)
class EventHub:
    """Fans proxy events out to every ``/loom/events`` subscriber; see the module docstring."""

    keepalive: float = KEEPALIVE
    queue_size: int = QUEUE_SIZE
    session: Any = None
    screen: Any = None
    subscribers: set[_Subscriber] = field(default_factory=set)
    dropped: int = 0  # subscribers dropped for falling behind
    closed: bool = False
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: int | None = None

    @classmethod
    def attach(cls, app: web.Application, session: Any = None, screen: Any = None) -> EventHub:
        """A hub serving ``app`` (call before the catch-all route), fed by the session's
        recorded exchanges and the screen's approvals when there are any."""
        hub = cls(session=session, screen=screen)
        app.router.add_get(EVENTS, hub.stream)
        app.on_startup.append(hub._started)
        app.on_shutdown.append(hub._shutdown)
        if session is not None and hasattr(session, "listeners"):
            session.listeners.append(_ExchangeFeed(hub))
        approvals = getattr(screen, "approvals", None)
        if approvals is not None:
            ShieldFeed(hub, screen, approvals)
        return hub

    async def _started(self, _app: web.Application) -> None:
        self._loop, self._thread = asyncio.get_running_loop(), threading.get_ident()

    async def _shutdown(self, _app: web.Application) -> None:
        self.close()

    # -- publishing (any thread) ---------------------------------------------------
    def publish(self, name: str, data: Any) -> None:
        """Queue one event for every subscriber; safe from any thread, never blocks."""
        if self.closed or self._loop is None or not self.subscribers:
            return  # nobody listens (the usual case): no encoding on the request path
        try:
            encoded = frame(name, data)
        except (TypeError, ValueError) as err:  # not JSON: say so, never fail the caller
            print(f"loom proxy: event {name} not sent ({err})", file=sys.stderr, flush=True)
            return
        if threading.get_ident() == self._thread:
            self._deliver(encoded)
            return
        try:
            self._loop.call_soon_threadsafe(self._deliver, encoded)
        except RuntimeError:
            pass  # the loop is closed: the proxy has stopped, nobody is listening

    def _deliver(self, encoded: bytes | None) -> None:
        for sub in list(self.subscribers):
            try:
                sub.queue.put_nowait(encoded)
            except asyncio.QueueFull:
                self._drop(sub)

    def _drop(self, sub: _Subscriber) -> None:
        """Forget a subscriber and abort its connection (its handler then ends)."""
        if sub in self.subscribers:
            self.subscribers.discard(sub)
            self.dropped += 1
        if sub.transport is not None:
            sub.transport.abort()

    def close(self) -> None:
        """End every stream: queued events are still sent, a stuck writer is aborted."""
        self.closed = True
        for sub in list(self.subscribers):
            if sub.writing:
                self._drop(sub)  # blocked on a full socket: it would hold the shutdown
            else:
                try:
                    sub.queue.put_nowait(None)
                except asyncio.QueueFull:
                    self._drop(sub)

    # -- serving --------------------------------------------------------------------
    def hello(self) -> dict[str, Any]:
        approvals = getattr(self.screen, "approvals", None)
        return {
            "proxy": "loom_core",
            "version": 1,
            "shield": approvals is not None,
            "exchanges": self.session.exchanges if self.session is not None else 0,
            "pending": approvals.pending() if approvals is not None else [],
        }

    def _refused(self, request: web.Request) -> web.Response | None:
        control = getattr(self.screen, "control", None)
        if control is not None:
            refused: web.Response | None = control.refused(request)  # loopback Host, then the token
            return refused
        if not loopback_host(request.headers.get("Host")):
            return json_error(403, "control endpoints answer loopback Host names only")
        return None

    async def stream(self, request: web.Request) -> web.StreamResponse:
        refused = self._refused(request)
        if refused is not None:
            return refused
        if self.closed:
            return json_error(503, "the proxy is stopping")
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        sub = _Subscriber(asyncio.Queue(max(1, self.queue_size)), request.transport)
        sub.queue.put_nowait(frame("hello", self.hello()))  # no await since the snapshot
        self.subscribers.add(sub)
        try:
            await self._pump(sub, response)
        except ConnectionResetError:
            pass  # dropped, or the subscriber left
        finally:
            self.subscribers.discard(sub)
        return response

    async def _pump(self, sub: _Subscriber, response: web.StreamResponse) -> None:
        while True:
            try:
                data = await asyncio.wait_for(sub.queue.get(), self.keepalive)
            except TimeoutError:
                data = b": keep-alive\n\n"
            if data is None:
                return
            sub.writing = True
            await response.write(data)
            sub.writing = False


class ShieldFeed:
    """Turns a shield's held calls into ``pending`` and ``decided`` events.

    Why it wraps ``Shield.screen_call``: a decision's §1.6 entry only exists inside the
    shield's screening generator, built as the held call wakes -- after the approvals
    registry's listeners have run. Wrapping that instance's generator sees each call's
    ``Verdict`` (entry included) a loop turn after the decision. The registry still
    reports what no verdict follows (the client left); a screen that exposes no
    ``Shield`` gets every ``decided`` from the registry, without the entry.
    """

    def __init__(self, hub: EventHub, screen: Any, approvals: Any) -> None:
        self.hub = hub
        shield = getattr(screen, "shield", None)
        self.tapped = callable(getattr(shield, "screen_call", None))
        if self.tapped:
            self._tap(shield)
        approvals.subscribe(self._changed)

    def _tap(self, shield: Any) -> None:
        original, publish = shield.screen_call, self._verdict

        def screen_call(name: str, tool_input: Any) -> Generator[Any, None, Any]:
            verdict = yield from original(name, tool_input)
            publish(verdict)
            return verdict

        shield.screen_call = screen_call

    def _verdict(self, verdict: Any) -> None:
        if not verdict.approval_id:
            return  # decided by a rule: no held call, its entry comes with the exchange
        entry = verdict.event or {}
        session = self.hub.session
        if session is not None and getattr(session, "scrub", False):
            entry = scrub_value(entry)  # exactly what the trace will hold
        out = {
            "id": verdict.approval_id,
            "tool": verdict.tool,
            "decision": "timeout"
            if verdict.via == "timeout"
            else "approve"
            if verdict.allowed
            else "deny",
            "via": verdict.via,
        }
        if entry.get("by"):
            out["by"] = entry["by"]
        if verdict.reason and not verdict.allowed:
            out["reason"] = verdict.reason
        if verdict.edited:
            out["edited_input"] = verdict.executed_input
        out["shield_event"] = entry
        self.hub.publish("decided", out)

    def _changed(self, approval: Any, change: str) -> None:
        if change in ("created", "updated"):
            self.hub.publish("pending", approval.listing(time.time()))
        elif change == "decided" and (approval.state == "cancelled" or not self.tapped):
            gone = approval.state == "cancelled"
            decision = {"approved": "approve", "denied": "deny"}.get(approval.state, "timeout")
            out = {
                "id": approval.id,
                "tool": approval.tool,
                "decision": "client-gone" if gone else decision,
                "via": None if gone else approval.via,
                "shield_event": None,
            }
            if approval.decided_by and not gone:
                out["by"] = approval.decided_by
            if approval.reason and approval.state == "denied":
                out["reason"] = approval.reason
            self.hub.publish("decided", out)
