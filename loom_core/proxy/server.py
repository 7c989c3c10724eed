"""The proxy's aiohttp application: forward, relay, screen (optional), record.

Request path of a POST (the only method that is recorded), see also :mod:`.hooks`:

1. size cap (``--max-body-mb``): 400 on a bad ``content-length``, 413 over the cap
   (loom-harness's messages, §6.2); replay mode answers from the recording here;
2. the body is decoded one level deep (:mod:`.rawreq`) -- without a screen or fork
   mode, once it has been sent upstream, while the upstream works, so that this is
   off the client's wait; a body that is not a JSON object is forwarded untouched
   and not recorded (uploads, other endpoints) -- loom-harness refuses it with 400;
3. ``screen.observe_request`` (taint) -- before anything goes upstream;
4. forwarded byte-identical with the client's headers (:mod:`.upstream`), no retry;
5. a non-2xx answer is relayed with its status, headers and body and not recorded;
   a connection failure is a 502, a timeout before the answer a 504 (JSON bodies);
6. a 2xx ``text/event-stream`` is relayed unbuffered (:mod:`.relay`) -- or, with a
   screen, buffered, screened, recorded and re-sent; a 2xx JSON model response
   (Anthropic message, chat completion, Responses object) is screened, recorded,
   then sent (upstream bytes as they were unless screening changed the object);
   any other 2xx body (token counts, embeddings...) is relayed, not recorded.

Persist before answer: every recorded exchange is written (sidecar and journal, in
the OS) before the client gets its last byte, so a ``kill -9`` at any point never
loses an answer a client holds (``tests/core/proxy/test_crash_points.py`` kills the
proxy at each point of :mod:`.faults`). When the write fails (a full disk) the client
gets 507 (500 for other I/O errors) with the reason, or, mid-stream, an error event
and a torn stream: never an answer the recording lacks.

An exchange is recorded iff the upstream completed it and the client was still
connected when it was about to be answered (a client that left gets nothing
recorded: the agent never saw that response). Handlers are cancelled when their
client disconnects (aiohttp ``handler_cancellation``), which is how a held
screening call learns that nobody waits for it any more.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import msgspec
from aiohttp import web

from loom_core.formats.wire import model_dialect
from loom_core.proxy import faults
from loom_core.proxy.config import ProxyConfig
from loom_core.proxy.events import EventHub
from loom_core.proxy.forkmode import ForkSource
from loom_core.proxy.hooks import Exchange, Screen
from loom_core.proxy.rawreq import RawRequest
from loom_core.proxy.reconstruct import StreamReconstructor, path_dialect, reconstruct
from loom_core.proxy.relay import client_gone, record_failed, relay_plain, relay_stream
from loom_core.proxy.replay import ReplaySource
from loom_core.proxy.session import RecordError, RecordingSession
from loom_core.proxy.sidecar_writer import Delta
from loom_core.proxy.synthesize import synthesize
from loom_core.proxy.upstream import (
    UPSTREAM_ERRORS,
    client_session,
    env_proxy,
    failure_reply,
    json_error,
    request_headers,
    response_headers,
)
from loom_core.proxy.watchdog import Watchdog

_decode = msgspec.json.Decoder()


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = _decode.decode(raw)
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, dict) else None


class ProxyServer:
    """One proxy: the app plus what it forwards to and records into."""

    def __init__(
        self,
        config: ProxyConfig,
        session: RecordingSession | None = None,
        screen: Screen | None = None,
        replay: ReplaySource | None = None,
        fork: ForkSource | None = None,
    ) -> None:
        self.config = config
        self.session = session
        self.screen = screen
        self.replay = replay
        self.fork = fork  # fork mode: the prefix from the recording, the rest live, edited
        self.client: aiohttp.ClientSession | None = None
        self.watchdog = Watchdog(config.upstream_timeout)  # --upstream-timeout's read gaps
        self.via = env_proxy(config.target)  # an HTTP(S)_PROXY for the upstream, if any
        self.upstream_calls = 0
        self.app = web.Application(client_max_size=config.max_body)
        self.app.on_startup.append(self._open_client)
        self.app.on_cleanup.append(self._close_client)
        add_routes = getattr(screen, "add_routes", None)
        if add_routes is not None:
            add_routes(self.app)  # the shield's control plane comes before the catch-all
        self.app.router.add_get("/loom/proxy", self.status)
        self.events = EventHub.attach(self.app, session, screen)  # GET /loom/events (ours)
        self.app.router.add_route("*", "/{tail:.*}", self.handle)

    async def _open_client(self, _app: web.Application) -> None:
        if self.replay is None:
            self.client = client_session(self.config.upstream_timeout)

    async def _close_client(self, _app: web.Application) -> None:
        self.watchdog.close()
        if self.client is not None:
            await self.client.close()

    async def status(self, _request: web.Request) -> web.Response:
        """``GET /loom/proxy``: what this proxy is doing (for the GUI; no secrets)."""
        s = self.session
        return web.json_response(
            {
                "proxy": "loom_core",
                "pid": os.getpid(),
                "replay": self.config.replay,
                "exchanges": s.exchanges if s else 0,
                "upstream_calls": self.upstream_calls,
                "save": str(s.paths.save) if s else None,
                "journal": str(s.paths.journal) if s else None,
            }
        )

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/loom/"):  # our namespace: never forwarded upstream
            if request.path.startswith("/loom/shield/"):
                return json_error(404, "no shield active on this proxy")  # loom-harness's words
            return json_error(404, f"no such proxy endpoint: {request.path}")
        if request.method != "POST":
            if self.replay is not None:
                return json_error(404, "replay mode serves recorded POSTs only")
            return await self._passthrough(request, await request.read())
        length = request.headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                return json_error(400, "invalid content-length header")
            if self.config.max_body and int(length) > self.config.max_body:
                return self._too_large(int(length))
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return self._too_large(None)  # chunked body: its size is only known to be larger
        if self.replay is not None:
            return self.replay.serve(_json_object(body))
        if self.session is None or not body:
            return await self._passthrough(request, body)
        if self.fork is None and self.screen is None:
            return await self._forward(request, body, None)  # decoded once it is sent
        if self.fork is None:
            raw = RawRequest.parse(body)  # one level deep: what recording needs
        else:
            parsed = _json_object(body)
            if parsed is not None:
                routed = self.fork.route(request.path_qs, body, parsed, self.session)
                if isinstance(routed, web.StreamResponse):
                    return routed
                body, parsed = routed
            raw = None if parsed is None else RawRequest.of(parsed)
        if raw is None:
            return await self._passthrough(request, body)
        return await self._forward(request, body, raw)

    def _too_large(self, size: int | None) -> web.Response:
        what = "request body" if size is None else f"request body {size} bytes"
        return json_error(
            413,
            f"{what} exceeds the proxy cap ({self.config.max_body}); raise it with --max-body-mb",
        )

    async def _passthrough(self, request: web.Request, body: bytes) -> web.StreamResponse:
        """Forward anything that is not recorded; stream the answer back unchanged."""
        assert self.client is not None
        self.upstream_calls += 1
        got_headers = False
        try:
            with self.watchdog.watching(request.transport):
                async with self.client.request(
                    request.method,
                    self.config.target + request.path_qs,
                    data=body or None,
                    headers=request_headers(request.headers),
                    allow_redirects=False,
                    **self.via,
                ) as up:
                    got_headers = True
                    return await relay_plain(request, up)
        except UPSTREAM_ERRORS as exc:
            return failure_reply(exc, self.config.target, self.config.upstream_timeout, got_headers)

    async def _forward(
        self, request: web.Request, body: bytes, raw: RawRequest | None
    ) -> web.StreamResponse:
        """Forward a POST and record its answer. ``raw`` None: the body is decoded (and
        its sidecar delta found) once it is sent, while the upstream works; a body that
        is not a JSON object is then relayed as :meth:`_passthrough` does, not recorded."""
        assert self.client is not None and self.session is not None
        path_qs = request.path_qs
        call = _Call(path_qs.split("?", 1)[0], raw, None, [], 0.0, body, self.session)
        if self.screen is not None and raw is not None:  # the shield sees it all, decoded
            parsed = _json_object(body) or raw.value()
            call.exchange = Exchange(
                path_qs, parsed, path_dialect(request.path), bool(parsed.get("stream"))
            )
            call.events = list(self.screen.observe_request(call.exchange))
        faults.reached("request")
        call.started = time.monotonic()
        self.upstream_calls += 1
        got_headers = False
        try:
            with self.watchdog.watching(request.transport, call.prepare):
                async with self.client.post(
                    self.config.target + path_qs,
                    data=body,
                    headers=request_headers(request.headers),
                    allow_redirects=False,
                    **self.via,
                ) as up:
                    got_headers = True
                    faults.reached("upstream")
                    call.prepare()  # (done already, unless the upstream beat the loop to it)
                    if not 200 <= up.status < 300 or call.request is None:
                        return await relay_plain(request, up)  # errors: faithful, not recorded
                    if up.content_type == "text/event-stream":
                        if self.screen is None:

                            def done(recon: StreamReconstructor) -> None:
                                self._persist(call, recon.dialect, recon.result())

                            return await relay_stream(request, up, done)
                        return await self._screened_stream(request, up, call)
                    return await self._json_reply(request, up, await up.read(), call)
        except UPSTREAM_ERRORS as exc:
            if client_gone(request):
                return web.Response(status=499)  # nobody to answer; nothing recorded
            return failure_reply(exc, self.config.target, self.config.upstream_timeout, got_headers)

    async def _json_reply(
        self, request: web.Request, up: aiohttp.ClientResponse, raw: bytes, call: _Call
    ) -> web.Response:
        """Screen and record a 2xx JSON model response, then send it; anything else as is."""
        headers = response_headers(up.headers)
        response = _json_object(raw)
        dialect = model_dialect(response)
        if response is None or dialect is None:
            return web.Response(body=raw, status=up.status, headers=headers)
        if self.screen is not None:
            assert call.exchange is not None
            screened = await self.screen.screen_response(call.exchange, response)
            call.events, response = call.events + screened.events, screened.response
            if screened.changed:
                raw = json.dumps(response).encode()
        reply = web.Response(body=raw, status=up.status, headers=headers)
        if client_gone(request):
            return reply  # nobody to answer: nothing recorded
        try:
            self._persist(call, dialect, response, raw)
        except RecordError as err:
            return record_failed(err)
        await reply.prepare(request)
        await reply.write_eof()
        faults.reached("answered")
        return reply

    async def _screened_stream(
        self, request: web.Request, up: aiohttp.ClientResponse, call: _Call
    ) -> web.Response:
        """With a screen a stream is judged whole before the client sees any of it."""
        assert self.screen is not None and call.exchange is not None
        raw = await up.read()
        response, dialect = reconstruct(request.path_qs, raw)
        headers = response_headers(up.headers)
        if response is not None:
            screened = await self.screen.screen_response(call.exchange, response)
            if not client_gone(request):
                call.events += screened.events
                try:
                    self._persist(call, dialect, screened.response)
                except RecordError as err:
                    return record_failed(err)
            if screened.changed:
                raw = synthesize(screened.response)
        return web.Response(body=raw, status=up.status, headers=headers)

    def _persist(
        self, call: _Call, dialect: str, response: dict[str, Any], raw: bytes | None = None
    ) -> None:
        assert self.session is not None and call.request is not None
        ms = (time.monotonic() - call.started) * 1000
        self.session.record(
            call.path, dialect, call.request, response, call.events, ms, raw, call.delta
        )


@dataclass(slots=True)
class _Call:
    """One recorded POST on its way: what its record needs."""

    path: str  # without the query
    request: RawRequest | None  # None: not a JSON object (or not decoded yet: ``body``)
    exchange: Exchange | None  # what a screen sees (only with a screen)
    events: list[dict[str, Any]]  # shield events so far
    started: float  # when it went upstream (monotonic)
    body: bytes | None  # the request body until :meth:`prepare` decodes it
    session: RecordingSession
    delta: Delta | None = None  # the request's sidecar delta, found ahead

    def prepare(self) -> None:
        """Decode the body one level deep and find its delta (once; see ``_forward``)."""
        body, self.body = self.body, None
        if body is None:
            return
        if self.request is None:
            self.request = RawRequest.parse(body)
        if self.request is not None:
            self.delta = self.session.delta(self.path, self.request)
