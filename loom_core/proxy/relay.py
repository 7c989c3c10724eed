"""Relay an upstream SSE stream to the client unbuffered, recording it before it ends.

Every chunk is written to the client as soon as it arrives, except the bytes of the
stream's final event (``message_stop``, ``data: [DONE]``, ``response.completed``):
those are held until the exchange, reconstructed from the relayed bytes, has been
handed to ``on_complete`` (which appends it to the journal). So a client that has
seen a complete response knows it is on disk. A stream that ends cleanly without a
final event is recorded if it carried a finish indicator, before the chunked terminator.

Why chunks are not parsed as they pass: that cost more CPU than relaying them. A
chunk that cannot complete the final event (no final-event marker among the bytes
not yet parsed, see :meth:`.StreamReconstructor.add`) is sent at once and only kept;
the kept bytes are parsed in bulk when a chunk that may complete it comes -- that
chunk is parsed before it is sent -- or when the stream ends.

Also here, the other two ways an answer leaves: :func:`relay_plain` relays one that
is not recorded (errors, other endpoints) as it comes, and :func:`record_failed` is
the reply when a record could not be written.

Failures (decided, and tested):

* the exchange cannot be written (a full disk: :class:`.session.RecordError`) -> the
  final event is withheld; the client gets an ``error`` event in its dialect saying
  why, then the connection is closed without the chunked terminator;

* the upstream drops or stalls (read timeout) mid-stream -> nothing is recorded and
  the client connection is closed without the chunked terminator, so its SDK raises
  instead of mistaking a torn stream for a short answer;
* the client disconnects mid-stream -> nothing is recorded (the agent never saw the
  response, so the next request will not build on it) and the upstream request is
  closed at once, which stops generation upstream.
"""

from __future__ import annotations

import contextlib
import errno
import json
import sys
from collections.abc import Callable

import aiohttp
from aiohttp import web

from loom_core.proxy import faults
from loom_core.proxy.reconstruct import StreamReconstructor
from loom_core.proxy.session import WITHHELD, RecordError
from loom_core.proxy.upstream import UPSTREAM_ERRORS, json_error, response_headers


def client_gone(request: web.Request) -> bool:
    """True once the client's connection is closed or closing."""
    transport = request.transport
    return transport is None or transport.is_closing()


async def relay_stream(
    request: web.Request,
    upstream: aiohttp.ClientResponse,
    on_complete: Callable[[StreamReconstructor], None],
) -> web.StreamResponse:
    """Relay ``upstream`` (an SSE response) to the client; see the module docstring."""
    recon = StreamReconstructor(request.path_qs)
    reply = web.StreamResponse(status=upstream.status, headers=response_headers(upstream.headers))
    reply.headers.setdefault("cache-control", "no-cache")
    await reply.prepare(request)
    done, read_all, relayed = False, False, False
    try:
        async for chunk in upstream.content.iter_any():
            terminal = None if done or not recon.add(chunk) else recon.parse()
            if terminal is None:
                await reply.write(chunk)  # cannot hold the final event's end: send now
                if not relayed:
                    relayed = True
                    faults.reached("relayed")
                continue
            done = True  # hold the final event's bytes until the exchange is on disk
            cut = max(0, terminal - (recon.size - len(chunk)))
            if cut:
                await reply.write(chunk[:cut])
            failed = _complete(request, recon, on_complete)
            if failed is not None:
                await _refuse(request, reply, recon.dialect, failed)
                return reply
            if cut < len(chunk):
                await reply.write(chunk[cut:])
        read_all = True
    except UPSTREAM_ERRORS:
        if client_gone(request):
            return reply  # the client left: nothing recorded (unless already complete)
        if not done:
            _abort(request)  # the upstream failed: the client must see an error
            return reply
    finally:
        if not read_all:
            upstream.close()  # stop the upstream generating for nobody (also on cancel)
    if not done:
        recon.close()
        failed = _complete(request, recon, on_complete)
        if failed is not None:
            await _refuse(request, reply, recon.dialect, failed)
            return reply
    if not client_gone(request):
        await reply.write_eof()
        faults.reached("answered")
    return reply


def _complete(
    request: web.Request,
    recon: StreamReconstructor,
    on_complete: Callable[[StreamReconstructor], None],
) -> RecordError | None:
    """Record a complete stream (unless its client left); the error if the write failed."""
    if recon.finished and not client_gone(request):
        try:
            on_complete(recon)
        except RecordError as err:
            return err
    return None


async def _refuse(
    request: web.Request, reply: web.StreamResponse, dialect: str, err: RecordError
) -> None:
    """The record failed: an error event in the stream's dialect, then a torn stream."""
    reason = f"{WITHHELD}: {err}"
    print(f"loom proxy: {err}", file=sys.stderr, flush=True)
    if dialect == "anthropic":
        event = {"type": "error", "error": {"type": "api_error", "message": reason}}
        data = b"event: error\ndata: " + json.dumps(event).encode() + b"\n\n"
    else:  # the OpenAI SDKs raise on a data object with an "error" member
        event = {"error": {"message": reason, "type": "server_error", "code": None}}
        data = b"data: " + json.dumps(event).encode() + b"\n\n"
    if not client_gone(request):
        with contextlib.suppress(*UPSTREAM_ERRORS):
            await reply.write(data)
    _abort(request)


def _abort(request: web.Request) -> None:
    """End the client's connection without the chunked terminator (a visible error)."""
    transport = request.transport
    if transport is not None:
        transport.abort()


_NO_ROOM = frozenset(
    (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC))  # disk, file, quota
)


def record_failed(err: RecordError) -> web.Response:
    """The answer is withheld because its record could not be written: say why.

    507 (Insufficient Storage) when there is no room (a full disk, a file size limit,
    a quota), 500 for other I/O errors; the operator reads the same reason on stderr."""
    print(f"loom proxy: {err}", file=sys.stderr, flush=True)
    return json_error(507 if err.cause.errno in _NO_ROOM else 500, f"{WITHHELD}: {err}")


async def relay_plain(request: web.Request, up: aiohttp.ClientResponse) -> web.StreamResponse:
    """Relay status, headers and body as they come; a torn body aborts the client's too."""
    reply = web.StreamResponse(
        status=up.status, reason=up.reason, headers=response_headers(up.headers)
    )
    await reply.prepare(request)
    try:
        async for chunk in up.content.iter_any():
            await reply.write(chunk)
    except UPSTREAM_ERRORS:
        if request.transport is not None:
            request.transport.abort()
        return reply
    await reply.write_eof()
    return reply
