"""``python -m loom_core otlp-receive``: file every OpenTelemetry trace sent to 127.0.0.1.

Why headless: a server, CI job or terminal session has no window to open tabs in, yet
the runs its instrumented agents export should land somewhere the app (or ``summary``)
opens later. One ``<trace_id>.otlp.jsonl`` per trace in ``--save``; the bound address and
each new trace are printed; SIGINT and SIGTERM stop it cleanly.

Bad arguments (a non-loopback host, a port outside 0-65535, a folder that cannot be
made, a port in use) exit 2 with one line on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom_core.cli.help import print_error

if TYPE_CHECKING:  # the command imports aiohttp and protobuf only when it runs
    from loom_core.live.otlp_receiver import ReceiverConfig

DEFAULT_SAVE = "otlp-traces"


def add_otlp_receive_command(sub: Any) -> None:
    """Register ``otlp-receive`` on the CLI's sub-parsers (light: nothing heavy imported)."""
    p = sub.add_parser(
        "otlp-receive",
        help="receive OpenTelemetry traces over OTLP/HTTP on 127.0.0.1 (one file per trace)",
        description="Listen for OTLP/HTTP trace exports (JSON or protobuf, gzip) on a "
        "loopback address and append each trace's spans to DIR/<trace_id>.otlp.jsonl. "
        "Point an instrumented agent at it with "
        "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:PORT.",
    )
    p.add_argument("--host", default="127.0.0.1", help="loopback address to bind (127.0.0.1)")
    # a string, checked by the command: a bad value is one line and exit 2, not argparse's usage
    p.add_argument("--port", default="4318", help="port (default 4318; 0 = any free port)")
    p.add_argument("--save", default=DEFAULT_SAVE, metavar="DIR", help="folder for trace files")
    p.add_argument("--max-body-mb", default="32", help="refuse larger requests with 413")
    p.add_argument(
        "--publish",
        action="store_true",
        help="when the receiver stops, publish each trace file to the run library's run "
        "store (LOOM_LIBRARY_URL's library; see runs store)",
    )
    p.set_defaults(func=cmd_otlp_receive)


def _number(text: str, flag: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{flag}: not a number: {text!r}") from None
    if not low <= value <= high:
        raise ValueError(f"{flag}: must be {low:g}-{high:g}, not {text}")
    return value


def cmd_otlp_receive(args: argparse.Namespace) -> int:
    from loom_core.live.otlp_receiver import ReceiverConfig, check_loopback

    try:
        port = _number(args.port, "--port", 0, 65535)
        if port != int(port):
            raise ValueError(f"--port: not a whole number: {args.port}")
        max_mb = _number(args.max_body_mb, "--max-body-mb", 0, 1 << 20)
        check_loopback(args.host)
    except ValueError as err:
        print_error(str(err))
        return 2
    config = ReceiverConfig(Path(args.save), args.host, int(port), int(max_mb * 1024 * 1024))
    received: list[str] = []
    code = asyncio.run(_serve(config, received))
    if args.publish and code == 0:
        from loom_core.library.publish_done import publish_finished

        for line in publish_finished(received):
            print(f"otlp-receive: {line}", file=sys.stderr, flush=True)
    return code


def _cause(err: OSError | ValueError, config: ReceiverConfig) -> str:
    """One line: which of the folder or the address failed, and why."""
    if isinstance(err, OSError) and err.filename:
        return f"{err.filename}: {err.strerror or err}"
    if isinstance(err, OSError):
        return f"{config.host}:{config.port}: {err.strerror or err}"
    return str(err)


async def _serve(config: ReceiverConfig, received: list[str]) -> int:
    """Receive until SIGINT/SIGTERM; ``received`` gets the trace files written."""
    from loom_core.live.otlp_receiver import serve_until, start_receiver
    from loom_core.live.otlp_store import TraceStore

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    store = TraceStore(config.save)
    store.on_new_trace = lambda trace_id, path: print(f"trace {trace_id} -> {path}", flush=True)
    try:
        receiver = await start_receiver(config, store)
    except (OSError, ValueError) as err:
        print_error(_cause(err, config))
        return 2
    print(
        f"listening on {receiver.endpoint}/v1/traces (and /v1/logs), saving to {config.save}\n"
        f"  export OTEL_EXPORTER_OTLP_ENDPOINT={receiver.endpoint}",
        flush=True,
    )
    await serve_until(receiver, stop)
    print(
        f"otlp-receive: stopped; {len(store.paths)} trace(s) in {len(store.files)} file(s), "
        f"{store.spans} span(s) in {receiver.requests} request(s)",
        file=sys.stderr,
        flush=True,
    )
    received.extend(str(p) for p in sorted(set(store.files)))
    return 0
