"""The proxy benchmark's load: requests at a set concurrency, timed per request.

One aiohttp client session in the calling process; concurrency bounded by a
semaphore, every request by ``REQUEST_TIMEOUT`` and the whole run by ``max_seconds``.
Latency is request sent -> last byte read; for streams, time to the first body byte
too (``ttfb``). A warm-up (10 requests, or ``concurrency`` when paced) is not timed.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from proxy_upstream import request_body

REQUEST_TIMEOUT = 30.0  # seconds, per request


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def run_load(
    port: int, n: int, concurrency: int, stream: bool, pace_ms: float, max_seconds: float
) -> dict[str, Any]:
    """``n`` requests at ``concurrency``; latency and first-byte times in ms."""
    import aiohttp

    url = f"http://127.0.0.1:{port}/v1/messages"
    headers = {
        "content-type": "application/json",
        "x-api-key": "sk-ant-bench-not-a-key",
        "anthropic-version": "2023-06-01",
    }
    latencies: list[float] = []
    ttfbs: list[float] = []
    errors: list[str] = []
    sem = asyncio.Semaphore(concurrency)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
    connector = aiohttp.TCPConnector(limit=concurrency, force_close=False)

    async with aiohttp.ClientSession(
        connector=connector, timeout=timeout, auto_decompress=False
    ) as client:

        async def one(i: int, measured: bool, deadline: float) -> None:
            async with sem:
                if time.monotonic() > deadline:
                    return
                body = request_body(i, stream, pace_ms)
                t0 = time.perf_counter()
                first: float | None = None
                try:
                    async with client.post(url, data=body, headers=headers) as resp:
                        tail = b""
                        async for chunk in resp.content.iter_any():
                            if first is None:
                                first = time.perf_counter()
                            tail = (tail + chunk)[-64:]
                        t1 = time.perf_counter()
                        if resp.status != 200:
                            raise RuntimeError(f"status {resp.status}")
                        if stream and b"message_stop" not in tail:
                            raise RuntimeError("stream ended without message_stop")
                except (TimeoutError, aiohttp.ClientError, RuntimeError, OSError) as exc:
                    errors.append(f"{type(exc).__name__}: {exc}"[:200])
                    return
                if measured:
                    latencies.append((t1 - t0) * 1000)
                    if stream and first is not None:
                        ttfbs.append((first - t0) * 1000)

        warmup = concurrency if pace_ms else 10  # paced requests take ~0.5 s each
        far = time.monotonic() + REQUEST_TIMEOUT * 2
        await asyncio.gather(*(one(-1 - i, False, far) for i in range(warmup)))
        warm_errors = list(errors)
        errors.clear()
        if warm_errors and len(warm_errors) == warmup:
            raise RuntimeError(f"every warm-up request failed: {warm_errors[0]}")
        started = time.perf_counter()
        deadline = time.monotonic() + max_seconds
        await asyncio.gather(*(one(i, True, deadline) for i in range(n)))
        elapsed = time.perf_counter() - started

    out: dict[str, Any] = {
        "n": len(latencies),
        "errors": len(errors),
        "rps": round(len(latencies) / elapsed, 1) if elapsed > 0 else 0.0,
        "p50_ms": round(_pct(latencies, 0.5), 3),
        "p99_ms": round(_pct(latencies, 0.99), 3),
        "max_ms": round(max(latencies, default=float("nan")), 3),
        "truncated": len(latencies) + len(errors) < n,
    }
    if stream:
        out["ttfb_p50_ms"] = round(_pct(ttfbs, 0.5), 3)
        out["ttfb_p99_ms"] = round(_pct(ttfbs, 0.99), 3)
    if errors:
        out["first_error"] = errors[0]
    return out
