"""The floor for any recording proxy on this machine: a minimal aiohttp pass-through.

Issue 4 calibrates its targets against "a minimal aiohttp pass-through that also
appends a JSONL record". This is that proxy, so ``proxy_overhead.py`` can measure
it on the same machine under the same load and state how far ours is from it:
it forwards each POST with one shared client session, relays the response body
chunk by chunk as it arrives, and appends one JSON line (path, status, sizes,
milliseconds) per exchange. No parsing, no screening, no trace.

    python benchmarks/minimal_proxy.py PORTFILE TARGET_URL [asyncio|uvloop]

The optional last argument is its event loop (default asyncio), so that it can be
measured on the same loop as ours.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path


def serve(port_file: str, target: str, loop: str = "asyncio") -> int:
    import aiohttp
    from aiohttp import web

    log = open(port_file + ".jsonl", "a", encoding="utf-8")

    async def forward(request: web.Request) -> web.StreamResponse:
        t0 = time.perf_counter()
        body = await request.read()
        session: aiohttp.ClientSession = request.app["client"]
        headers = {
            k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")
        }
        async with session.post(target + request.path_qs, data=body, headers=headers) as up:
            resp = web.StreamResponse(
                status=up.status,
                headers={"content-type": up.headers.get("content-type", "application/json")},
            )
            await resp.prepare(request)
            size = 0
            async for chunk in up.content.iter_any():
                size += len(chunk)
                await resp.write(chunk)
            await resp.write_eof()
        log.write(
            json.dumps(
                {
                    "path": request.path,
                    "status": up.status,
                    "in": len(body),
                    "out": size,
                    "ms": round((time.perf_counter() - t0) * 1000, 3),
                }
            )
            + "\n"
        )
        log.flush()
        return resp

    async def main() -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)

        async def client(app: web.Application):  # type: ignore[no-untyped-def]
            app["client"] = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0), auto_decompress=False
            )
            yield
            await app["client"].close()

        app.cleanup_ctx.append(client)
        app.router.add_post("/{tail:.*}", forward)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        Path(port_file + ".tmp").write_text(json.dumps({"port": port, "pid": os.getpid()}))
        os.replace(port_file + ".tmp", port_file)
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        await stop.wait()
        await runner.cleanup()

    try:
        if loop == "uvloop":
            import uvloop

            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                runner.run(main())
        else:
            asyncio.run(main())
    finally:
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(serve(*sys.argv[1:4]))
