"""Benchmark: CPU microseconds of the recording path alone, per exchange, in one process.

    python benchmarks/record_cpu.py                  # 3 rounds of 2,000 exchanges per mode
    python benchmarks/record_cpu.py --exchanges 4000 --rounds 5

Why beside ``proxy_cpu.py``: that one measures the whole proxy process (aiohttp,
sockets, the trace rewrite) from ``/proc`` ticks, and on a loaded shared machine its
rounds differ by more than a change to recording does. This runs only what recording
adds to a pass-through -- the request decoded one level deep and its sidecar delta, a
stream folded from its SSE bytes, :meth:`RecordingSession.record` (effects, sidecar
line, journal lines, both writes) -- on the benchmark's own ~9 KB Anthropic request
and answers (:mod:`proxy_upstream`), timed with the process CPU clock. Modes: ``json``;
``stream`` (the 50-event answer in one read); ``reads`` (the same answer one event per
read, as a paced stream arrives: the relay's per-read check counts too). Prints one
JSON line: per mode the lowest and the median round, in microseconds per exchange.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proxy_upstream import _message, _stream_events, request_body  # noqa: E402

from loom_core.proxy.rawreq import RawRequest  # noqa: E402
from loom_core.proxy.reconstruct import StreamReconstructor  # noqa: E402
from loom_core.proxy.session import RecordingSession  # noqa: E402

PATH = "/v1/messages"
_ROUNDS = itertools.count()
REPLY = json.dumps(_message("Fixed: views.py referenced page_7.html. All 24 tests pass.")).encode()


def _round(tmp: Path, mode: str, n: int) -> float:
    """CPU microseconds per exchange over ``n`` exchanges of ``mode`` (a fresh session)."""
    save = tmp / f"{mode}-{next(_ROUNDS)}.loom.json"  # abandoned: a fresh --save each round
    session = RecordingSession(save, freeze_gc=True)
    bodies = [request_body(i, mode != "json", 0) for i in range(n)]
    events = _stream_events()
    reads = events if mode == "reads" else [b"".join(events)]
    decode = msgspec.json.Decoder().decode
    start = time.process_time()
    for body in bodies:
        raw = RawRequest.parse(body)
        assert raw is not None
        delta = session.delta(PATH, raw)
        if mode == "json":
            session.record(PATH, "anthropic", raw, decode(REPLY), [], 1.0, REPLY, delta)
            continue
        recon = StreamReconstructor(PATH)
        for chunk in reads:
            if recon.add(chunk):
                recon.parse()
        session.record(PATH, recon.dialect, raw, recon.result(), [], 1.0, None, delta)
    spent = time.process_time() - start
    session.abandon()  # the trace rewrite is not part of this figure
    return spent / n * 1e6


def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"exchanges": args.exchanges, "rounds": args.rounds}
    with tempfile.TemporaryDirectory(prefix="loom-record-cpu-") as name:
        for mode in ("json", "stream", "reads"):
            _round(Path(name), mode, 50)  # imports, caches
            rounds = [_round(Path(name), mode, args.exchanges) for _ in range(args.rounds)]
            out[mode] = {
                "lowest_us": round(min(rounds), 1),
                "median_us": round(statistics.median(rounds), 1),
            }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--exchanges", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    print(json.dumps(asyncio.run(_async_run(parser.parse_args()))))
    return 0


async def _async_run(args: argparse.Namespace) -> dict[str, Any]:
    """A running loop, as in the proxy (the session's events need one)."""
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
