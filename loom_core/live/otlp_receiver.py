"""A local OTLP/HTTP trace receiver: any OpenTelemetry-instrumented agent exports here.

Why: most agent runs are already traced with OpenTelemetry (OpenInference, OpenLLMetry,
the SDKs' own instrumentation). Pointing ``OTEL_EXPORTER_OTLP_ENDPOINT`` at this receiver
files each trace as it arrives (:mod:`loom_core.live.otlp_store`) so the app opens it as a
run that grows live, with nothing else to install.

Loopback only: the receiver writes files from whatever it is sent, so it binds a loopback
address (a non-loopback host is refused before binding) and answers 403 to a request
whose ``Host`` is not a loopback name (a web page cannot reach it by DNS rebinding).

``POST /v1/logs`` takes log records the same way (GenAI content in OpenLLMetry's event
mode): they are filed with their trace's spans, which the OTLP reader joins them to.

Answers follow the OTLP/HTTP specification: 200 with an ``ExportTraceServiceResponse``
(``partial_success`` when spans were rejected), 400 with a ``google.rpc.Status`` for a
body that cannot be decoded, 413 for a body over the cap, 415 for another content type
or encoding, 503 (retryable) when the file cannot be written.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from loom_core.live.otlp_body import (
    LOGS,
    PROTOBUF,
    SPANS,
    BodyError,
    Decoded,
    Signal,
    decode,
    inflate,
    media_type,
)
from loom_core.live.otlp_store import TraceStore

DEFAULT_PORT = 4318  # the OTLP/HTTP port every exporter defaults to
DEFAULT_MAX_BODY = 32 * 1024 * 1024
TRACES_PATH = "/v1/traces"
LOGS_PATH = "/v1/logs"  # GenAI content as log records (OpenLLMetry's event mode)
_INVALID_ARGUMENT = 3  # google.rpc.Code


def check_loopback(host: str) -> str:
    """``host`` if it is a loopback address or ``localhost``; ValueError otherwise."""
    if host == "localhost":
        return host
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise ValueError(f"{host!r} is not a loopback address; the receiver listens on 127.0.0.1 only")


def _loopback_header(value: str) -> bool:
    """Whether a ``Host`` header names this machine (``127.0.0.1:4318``, ``[::1]:…``)."""
    host = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
    if host.startswith("["):
        host = host[1 : host.find("]")]
    try:
        check_loopback(host)
    except ValueError:
        return False
    return True


@dataclass
class ReceiverConfig:
    """What one receiver listens on and where it files traces."""

    save: Path
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT  # 0: any free port (see OtlpReceiver.port)
    max_body: int = DEFAULT_MAX_BODY


@dataclass
class OtlpReceiver:
    """A listening receiver; start with :func:`start_receiver`, stop with :meth:`close`."""

    config: ReceiverConfig
    store: TraceStore
    runner: web.AppRunner
    port: int
    requests: int = 0
    problems: list[str] = field(default_factory=list)  # the last few refused requests

    @property
    def endpoint(self) -> str:
        """What ``OTEL_EXPORTER_OTLP_ENDPOINT`` should be set to."""
        host = self.config.host
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"

    async def close(self) -> None:
        """Stop listening; requests in flight finish first (bounded by the runner); log
        records still waiting for their spans are written to files of their own."""
        await self.runner.cleanup()
        self.store.close()


def _status_body(message: str, protobuf: bool) -> tuple[bytes, str]:
    if protobuf:
        return Status(code=_INVALID_ARGUMENT, message=message).SerializeToString(), PROTOBUF
    return json.dumps({"code": _INVALID_ARGUMENT, "message": message}).encode(), "application/json"


def _success_body(decoded: Decoded, protobuf: bool) -> tuple[bytes, str]:
    response = ExportTraceServiceResponse()
    if decoded.rejected:  # only spans are rejected (a log record needs no trace id)
        response.partial_success.rejected_spans = decoded.rejected
        response.partial_success.error_message = decoded.problem
    if protobuf:
        return response.SerializeToString(), PROTOBUF
    partial = (
        {"partialSuccess": {"rejectedSpans": decoded.rejected, "errorMessage": decoded.problem}}
        if decoded.rejected
        else {}
    )
    return json.dumps(partial).encode(), "application/json"


def _app(receiver: Callable[[], OtlpReceiver], config: ReceiverConfig) -> web.Application:
    async def traces(request: web.Request) -> web.Response:
        return await export(request, SPANS)

    async def logs(request: web.Request) -> web.Response:
        return await export(request, LOGS)

    async def export(request: web.Request, signal: Signal) -> web.Response:
        protobuf = media_type(request.content_type) == PROTOBUF
        own = receiver()
        if not _loopback_header(request.host):
            return web.Response(status=403, text=f"Host {request.host!r} is not loopback")
        try:
            decoded = await _read(request, config.max_body, signal)
            own.requests += 1
            for trace_id, part in decoded.traces.items():
                if signal is LOGS:
                    own.store.append_logs(trace_id, part)
                else:
                    own.store.append(trace_id, part, decoded.spans[trace_id])
        except BodyError as err:
            own.problems[:] = [*own.problems[-9:], err.message]
            body, kind = _status_body(err.message, protobuf)
            return web.Response(status=err.status, body=body, content_type=kind)
        except OSError as err:  # disk full, folder removed: the exporter retries a 503
            body, kind = _status_body(f"cannot write trace file: {err}", protobuf)
            return web.Response(status=503, body=body, content_type=kind)
        if signal is LOGS:
            body, kind = _logs_success(protobuf)
        else:
            body, kind = _success_body(decoded, protobuf)
        return web.Response(status=200, body=body, content_type=kind)

    app = web.Application(client_max_size=0)  # the cap is enforced by _read, as a 413
    app.router.add_post(TRACES_PATH, traces)
    app.router.add_post(LOGS_PATH, logs)
    return app


def _logs_success(protobuf: bool) -> tuple[bytes, str]:
    """Every record is kept (one without a trace id too): a plain success."""
    if protobuf:
        return ExportLogsServiceResponse().SerializeToString(), PROTOBUF
    return b"{}", "application/json"


async def _read(request: web.Request, limit: int, signal: Signal) -> Decoded:
    if request.content_length is not None and limit and request.content_length > limit:
        raise BodyError(413, f"body of {request.content_length} bytes is over the {limit} cap")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(1 << 16):
        size += len(chunk)
        if limit and size > limit:
            raise BodyError(413, f"body is over the {limit} byte cap")
        chunks.append(chunk)
    body = inflate(b"".join(chunks), request.headers.get("Content-Encoding", ""), limit)
    return decode(body, request.headers.get("Content-Type", ""), signal)


async def start_receiver(config: ReceiverConfig, store: TraceStore | None = None) -> OtlpReceiver:
    """Check the host, create the folder, bind and start listening.

    ValueError: a non-loopback host; OSError: the folder cannot be made or the port is
    taken. Nothing is written before the port is bound."""
    check_loopback(config.host)
    store = store if store is not None else TraceStore(config.save)
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    sock = socket.create_server((config.host, config.port), family=family)
    holder: list[OtlpReceiver] = []
    try:
        store.prepare()
        runner = web.AppRunner(
            _app(lambda: holder[0], config),
            access_log=None,
            shutdown_timeout=2.0,
            auto_decompress=False,  # inflated by otlp_body.inflate, under the size cap
        )
        await runner.setup()
    except BaseException:
        sock.close()
        raise
    await web.SockSite(runner, sock).start()  # the runner owns the socket from here
    holder.append(OtlpReceiver(config, store, runner, int(sock.getsockname()[1])))
    return holder[0]


async def serve_until(receiver: OtlpReceiver, stop: asyncio.Event) -> None:
    """Run until ``stop`` is set, then close."""
    try:
        await stop.wait()
    finally:
        await receiver.close()
