"""Start, announce and stop one proxy; the ``python -m loom_core proxy`` process.

Lifecycle, every piece owned by :class:`RunningProxy`: the aiohttp runner (its
handlers are cancelled when their client disconnects), the upstream client
session (closed by the app's cleanup), the session's background trace writer,
the optional screen, and the ready file. :meth:`RunningProxy.close` stops them in
order: stop listening and let in-flight exchanges finish (3 s, then they are
cancelled and not recorded), close the screen, write the final trace, remove the
ready file. Calls still held for an approval are denied first, with the reason
"the proxy was stopped", so their agents get an answer instead of a dropped
connection. SIGINT, SIGTERM and SIGHUP lead there (:mod:`.stop_signals`, which
also keeps who sent the signal for the sidecar's ``end`` record; an inherited
``SIG_IGN`` for SIGINT does not make the process unstoppable, §13.16).

``--ready-file PATH`` (for a GUI that spawns the proxy): written atomically once
the port is listening, removed on a clean stop (a ready file whose ``pid`` is dead
means the proxy crashed)::

    {"version": 1, "pid": 1234, "host": "127.0.0.1", "port": 8790,
     "url": "http://127.0.0.1:8790", "target": "https://api.anthropic.com",
     "save": "/abs/session.loom.json", "journal": "/abs/session.journal.jsonl",
     "exchanges": "/abs/session.exchanges.jsonl", "replay": null,
     "token_file": null, "recovered": null, "event_loop": "uvloop", "otlp": null}

(``save``/``journal``/``exchanges`` are null in replay mode; ``token_file`` is the
shield's control-token file when a shield is active (:mod:`.control`, §7.7);
``recovered`` the trace a crashed previous session was compacted to at this start;
``event_loop`` ``uvloop`` or ``asyncio``, see :mod:`.evloop`; ``otlp`` the traces URL
spans go to with ``--otlp-endpoint``, see :mod:`.otlp_export`, else null.)
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from aiohttp import web

from loom_core.formats.save import atomic_write_bytes
from loom_core.proxy.config import ProxyConfig, SessionPaths
from loom_core.proxy.control import with_control_plane
from loom_core.proxy.evloop import loop_factory, loop_name, run_on
from loom_core.proxy.forkmode import ForkSource, fork_source
from loom_core.proxy.hooks import Screen, load_screen
from loom_core.proxy.recovery import check_save
from loom_core.proxy.replay import ReplaySource
from loom_core.proxy.server import ProxyServer
from loom_core.proxy.session import RecordingSession
from loom_core.proxy.stop_signals import STOPPED_REASON, StopCause, StopSignals

if TYPE_CHECKING:
    from loom_core.proxy.otlp_export import OtlpExport

SHUTDOWN_GRACE = 3.0


@dataclass
class RunningProxy:
    """A listening proxy and everything it owns."""

    config: ProxyConfig
    server: ProxyServer
    runner: web.AppRunner
    port: int
    ready: dict[str, Any] = field(default_factory=dict)
    otlp: OtlpExport | None = None  # --otlp-endpoint
    _closed: bool = False

    @property
    def url(self) -> str:
        host = self.config.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        return f"http://{'[' + shown + ']' if ':' in shown else shown}:{self.port}"

    @property
    def session(self) -> RecordingSession | None:
        return self.server.session

    async def close(self, stopped_by: StopCause | None = None) -> None:
        """Deny held calls, stop listening, finish or cancel in-flight exchanges, finalize.
        ``stopped_by`` goes into the sidecar's ``end`` record. Idempotent."""
        if self._closed:
            return
        self._closed = True
        deny_held(self.server.screen, STOPPED_REASON)  # their handlers answer within the grace
        await self.runner.cleanup()
        close_screen = getattr(self.server.screen, "close", None)
        if close_screen is not None:
            await close_screen()
        if self.session is not None:
            await self.session.close(stopped_by.record() if stopped_by else None)
            if self.otlp is not None:  # the last spans, bounded when the collector is down
                await asyncio.to_thread(self.otlp.close)
        if self.config.ready_file:
            Path(self.config.ready_file).unlink(missing_ok=True)


async def start_proxy(
    config: ProxyConfig,
    screen: Screen | None = None,
    workspace: dict[str, Any] | None = None,
    announce: TextIO | None = None,
    fork: ForkSource | None = None,
) -> RunningProxy:
    """Bind, start and announce a proxy. ``screen`` overrides the one the flags load;
    ``fork`` a fork source already built (else ``--fork-from`` builds one).

    The port is bound before any file is touched: a proxy that cannot listen (port in
    use) leaves the previous session's files as they were.
    """
    replay = ReplaySource(config.replay) if config.replay else None
    if replay is None:
        check_save(SessionPaths.of(config.save), config.force)  # a ValueError: exit 2
    fork = fork if fork is not None else fork_source(config)  # ForkError is a ValueError
    if config.otlp_endpoint:  # the OpenTelemetry SDK loads only when spans are asked for
        from loom_core.proxy.otlp_export import traces_url

        traces_url(config.otlp_endpoint)  # a ValueError (exit 2) before anything starts
    if replay is None and screen is None:
        screen = load_screen(config.shield)
    if replay is None:
        screen = with_control_plane(screen)  # §7.7: /loom/shield/* + the token file
    sock = _bind(config.host, config.port)
    session = None
    try:
        if replay is None:
            session = RecordingSession(
                config.save, config.target, config.scrub, config.save_interval, config.freeze_gc
            )
            session.workspace = workspace
        server = ProxyServer(config, session, None if replay else screen, replay, fork=fork)
        runner = web.AppRunner(
            server.app, handler_cancellation=True, access_log=None, shutdown_timeout=SHUTDOWN_GRACE
        )
        await runner.setup()
    except BaseException:
        sock.close()
        if session is not None:
            session.abandon()
        raise
    await web.SockSite(runner, sock).start()  # the runner owns the socket from here
    proxy = RunningProxy(config, server, runner, int(sock.getsockname()[1]))
    if session is not None:
        session.start()
        if config.otlp_endpoint:
            from loom_core.proxy.otlp_export import OtlpExport

            proxy.otlp = OtlpExport(config.otlp_endpoint, config.otlp_content, config.target)
            proxy.otlp.start()
            session.otlp = proxy.otlp
    start_screen = getattr(server.screen, "start", None)
    if start_screen is not None:
        await start_screen(proxy.port)
    proxy.ready = ready_info(proxy)
    if config.ready_file:
        atomic_write_bytes(config.ready_file, json.dumps(proxy.ready, indent=2).encode())
    if announce is not None:
        print(banner(proxy), file=announce, flush=True)
    return proxy


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket (IPv6 when the host is an IPv6 literal)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=512)


def ready_info(proxy: RunningProxy) -> dict[str, Any]:
    """The ready-file content (see the module docstring)."""
    s = proxy.session

    def absolute(p: Path | None) -> str | None:
        return None if p is None else os.path.abspath(p)

    token = getattr(proxy.server.screen, "token_file", None)
    return {
        "version": 1,
        "pid": os.getpid(),
        "host": proxy.config.host,
        "port": proxy.port,
        "url": proxy.url,
        "target": proxy.config.target,
        "save": absolute(s.paths.save) if s else None,
        "journal": absolute(s.paths.journal) if s else None,
        "exchanges": absolute(s.paths.exchanges) if s else None,
        "replay": absolute(Path(proxy.config.replay)) if proxy.config.replay else None,
        "token_file": str(token) if token else None,
        "recovered": absolute(s.recovered) if s and s.recovered else None,
        "event_loop": loop_name(asyncio.get_running_loop()),
        "otlp": proxy.otlp.url if proxy.otlp is not None else None,
    }


def banner(proxy: RunningProxy) -> str:
    """loom-harness's startup line, plus the OpenAI hint (ours serves both dialects)."""
    mode = (
        f"replaying {proxy.config.replay}"
        if proxy.config.replay
        else f"recording -> {proxy.config.save}"
    )
    if proxy.config.fork_from:
        mode = f"forking {proxy.config.fork_from} at model call {proxy.config.fork_at}, " + mode
    if proxy.otlp is not None:
        mode += f", spans -> {proxy.otlp.url}" + (" with content" if proxy.otlp.content else "")
    return (
        f"loom proxy on {proxy.url} ({mode})\n"
        f"  export ANTHROPIC_BASE_URL={proxy.url}\n"
        f"  export OPENAI_BASE_URL={proxy.url}/v1"
    )


def deny_held(screen: Any, reason: str) -> int:
    """Deny every call ``screen`` still holds, with ``reason``; returns how many."""
    approvals = getattr(screen, "approvals", None)
    if approvals is None:
        return 0
    from loom_core.shield import ApprovalRejected

    denied = 0
    for item in approvals.pending():
        try:
            approvals.decide(item["id"], "deny", by="loom proxy", reason=reason)
            denied += 1
        except ApprovalRejected:
            pass  # decided or timed out meanwhile: it has its answer
    return denied


async def serve(config: ProxyConfig, signals: StopSignals) -> int:
    """Run until a stop signal, then finalize; the ``proxy`` command's body."""
    try:
        proxy = await start_proxy(config, announce=sys.stdout)
    except (OSError, ValueError) as err:  # ValueError: ReplayError, bad shield policy
        print(f"error: {err}", file=sys.stderr)
        return 2
    cause = None
    try:
        cause = await signals.wait()
    finally:
        await proxy.close(cause)
    s = proxy.session
    by = f" by {cause.describe()}" if cause else ""
    saved = ""
    if s is not None:
        saved = f"; {s.exchanges} exchange(s) -> " + (
            str(config.save)
            if s.complete or not s.exchanges
            else f"{s.paths.exchanges} (the trace could not be written; the next start "
            "with the same --save recovers it)"
        )
    print(f"loom proxy: stopped{by}{saved}", file=sys.stderr, flush=True)
    if config.publish and s is not None and s.complete and s.exchanges:
        from loom_core.library.publish_done import publish_finished

        for line in publish_finished([config.save]):
            print(f"loom proxy: {line}", file=sys.stderr, flush=True)
    return 0


def main(config: ProxyConfig) -> int:
    try:
        factory = loop_factory(config.event_loop)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    signals = StopSignals()
    signals.install()  # before any thread starts: see loom_core.proxy.stop_signals
    try:
        return run_on(serve(config, signals), factory)
    finally:
        signals.close()
