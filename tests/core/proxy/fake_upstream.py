"""A fake model API on 127.0.0.1 that answers from a script of :class:`Reply` objects.

It speaks Anthropic Messages (``/v1/messages``), OpenAI Chat Completions
(``/v1/chat/completions``) and the Responses API (``/v1/responses``), as JSON or, when
the request says ``"stream": true``, as SSE (:mod:`fake_wire`). It remembers every
request it received (path, headers, body) so tests can count upstream calls and
check what was forwarded, and notices a proxy that hangs up mid-stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.core.proxy import fake_wire as fw
from tests.core.proxy.fake_wire import Reply


@dataclass
class Seen:
    """One request as the upstream received it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeUpstream:
    """Start with :meth:`start` (inside a running loop), stop with :meth:`stop`."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        # when set, answers every unscripted call from its (endpoint, body): a
        # deterministic model whose reply depends on what it was sent (forks, heal)
        self.responder: Callable[[str, dict[str, Any]], Reply] | None = None
        self.seen: list[Seen] = []
        self.hung_up = 0  # streams the proxy closed before their end
        self.finished_streams = 0
        self._runner: web.AppRunner | None = None
        self.url = ""

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/messages/count_tokens", self._count_tokens)
        app.router.add_post("/v1/{endpoint:.*}", self._model)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _count_tokens(self, request: web.Request) -> web.Response:
        self.seen.append(
            Seen(
                request.path,
                {k.lower(): v for k, v in request.headers.items()},
                await request.json(),
            )
        )
        return web.json_response({"input_tokens": 42})

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": "fake-1", "object": "model"}]},
            headers={"x-fake": "models"},
        )

    async def _model(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.seen.append(
            Seen(request.path, {k.lower(): v for k, v in request.headers.items()}, body)
        )
        n = len(self.seen) - 1
        if self.replies:
            reply = self.replies.pop(0)
        elif self.responder is not None:
            reply = self.responder(request.match_info["endpoint"], body)
        else:
            return web.json_response({"error": {"message": "unscripted call"}}, status=500)
        if reply.stall:
            await asyncio.sleep(reply.stall)
        if reply.status != 200:
            return web.json_response(
                reply.error or {"error": {"message": "fake"}},
                status=reply.status,
                headers={"x-fake-error": "yes", **reply.headers},
            )
        model = str(body.get("model", "fake"))
        endpoint = request.match_info["endpoint"]
        if not body.get("stream"):
            render = {
                "messages": fw.anthropic_json,
                "chat/completions": fw.chat_json,
                "responses": fw.responses_json,
            }[endpoint]
            return web.json_response(render(reply, n, model), headers={"request-id": f"req_{n}"})
        if endpoint == "messages":
            events = fw.anthropic_sse(reply, n, model)
        elif endpoint == "chat/completions":
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = fw.chat_sse(reply, n, model, wants_usage)
        else:
            events = fw.responses_sse(reply, n, model)
        return await self._stream(request, events, reply)

    async def _stream(
        self, request: web.Request, events: list[bytes], reply: Reply
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={
                "content-type": "text/event-stream; charset=utf-8",
                "cache-control": "no-cache",
            }
        )
        await resp.prepare(request)
        try:
            for i, event in enumerate(events):
                if reply.drop_after is not None and i == reply.drop_after:
                    assert request.transport is not None
                    request.transport.abort()  # the upstream dies mid-stream
                    return resp
                await resp.write(event)
                if reply.pace:
                    await asyncio.sleep(reply.pace)
            await resp.write_eof()
        except ConnectionError:
            self.hung_up += 1
            return resp
        self.finished_streams += 1
        return resp


def api_error(status: int, kind: str, message: str) -> Reply:
    """An Anthropic-shaped error body (the OpenAI SDK reads ``error.message`` too)."""
    return Reply(
        status=status, error={"type": "error", "error": {"type": kind, "message": message}}
    )


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
