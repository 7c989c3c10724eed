"""Benchmark: CPU milliseconds our recording proxy spends per exchange (json and stream).

    python benchmarks/proxy_cpu.py                    # 5 rounds per mode, one JSON line
    python benchmarks/proxy_cpu.py --rounds 1 --minimal   # + the bare pass-through (floor)
    python benchmarks/proxy_cpu.py --loop asyncio     # both on the standard event loop
    python benchmarks/proxy_cpu.py --loom             # + loom-harness's proxy

Why CPU time and not requests/s: on a shared 2-core machine wall time depends on
whatever else runs, while the CPU time a process is charged mostly does not. This
starts the fake upstream (:mod:`proxy_upstream`) and a fresh ``python -m loom_core
proxy`` per mode in front of it (recording to a temp dir), sends a short warm-up,
then rounds of requests (the same ~9 KB Anthropic request) and reads the proxy's
utime+stime from ``/proc/<pid>/stat`` before each round and after it, once the proxy
is idle again (:func:`proxy_targets.settle`): work deferred to a pause -- ours
rewrites its trace then -- is charged to the round. Modes:

* ``json``   -- ``--requests`` sequential non-streamed exchanges;
* ``stream`` -- ``--requests`` sequential 50-event SSE answers. The upstream writes
  the 50 events back to back; how many reads they take the proxy varies with
  scheduling (from 1 to 50), and with it the CPU, from round to round;
* ``paced``  -- ``--paced-requests`` 50-event answers with the upstream pausing
  ``--pace-ms`` between events, ``--paced-concurrency`` at a time: every event is
  its own read, as with a real model (and as at concurrency 8 in
  ``proxy_overhead.py``), so this is the steadiest figure of the per-event cost.

Per mode: ``cpu_ms_per_request`` is the lowest round (the least disturbed),
``median_ms`` the median, ``rounds_user_sys_ms`` each round's user and system ms.
With ``--minimal`` the same is measured for ``minimal_proxy.py``, with ``--loom`` for
loom-harness's ``loom proxy`` (its ``loom`` process). Linux only (``/proc``). Every process started is stopped
in a ``finally``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import proxy_targets as pt  # noqa: E402
from proxy_load import run_load  # noqa: E402
from proxy_upstream import STREAM_EVENTS  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(utime, stime) of ``pid`` (fields 14 and 15 of /proc/<pid>/stat), in seconds."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def measure(
    port: int, proc: pt.Proc, mode: tuple[str, int, int, float], rounds: int
) -> dict[str, Any]:
    """CPU ms per request of ``proc``, per round of the mode's load, including what it
    does once the load pauses (ours rewrites its trace then): read after it settles."""
    name, n, concurrency, pace = mode
    stream = name != "json"
    pid = proc.proc.pid
    asyncio.run(run_load(port, 20, concurrency, stream, pace, 60))  # imports, first trace
    pt.settle(proc)
    per_round: list[tuple[float, float]] = []  # (user, system) ms per request
    errors = 0
    for _ in range(rounds):
        user, system = cpu_seconds(pid)
        res = asyncio.run(run_load(port, n, concurrency, stream, pace, 600))
        pt.settle(proc)
        user_after, system_after = cpu_seconds(pid)
        done = max(1, res["n"])
        per_round.append(((user_after - user) * 1000 / done, (system_after - system) * 1000 / done))
        errors += res["errors"] + (n - res["n"])
    totals = sorted(u + s for u, s in per_round)
    return {
        "n": n,
        "errors": errors,
        "cpu_ms_per_request": round(totals[0], 4),
        "median_ms": round(totals[len(totals) // 2], 4),
        "rounds_user_sys_ms": [(round(u, 3), round(s, 3)) for u, s in per_round],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    modes = [
        ("json", args.requests, 1, 0.0),
        ("stream", args.requests, 1, 0.0),
        ("paced", args.paced_requests, args.paced_concurrency, args.pace_ms),
    ]
    out: dict[str, Any] = {
        "requests": args.requests,
        "rounds": args.rounds,
        "paced": {
            "requests": args.paced_requests,
            "pace_ms": args.pace_ms,
            "concurrency": args.paced_concurrency,
        },
        "stream_events": STREAM_EVENTS,
        "python": sys.version.split()[0],
        "loop": args.loop,
    }
    starters = [("ours", pt.start_ours)] + ([("minimal", pt.start_minimal)] if args.minimal else [])
    if args.loom and pt.loom_executable() is not None:  # its own loop, whatever --loop says
        starters.append(("loom", lambda tmp, url, name, _loop: pt.start_loom(tmp, url, name)))
    with tempfile.TemporaryDirectory(prefix="loom-cpu-") as tmp_name:
        tmp = Path(tmp_name)
        upstream, up_port = pt.start_upstream(tmp)
        try:
            for target, start in starters:
                out[target] = {}
                for mode in modes:
                    proc, port = start(
                        tmp, f"http://127.0.0.1:{up_port}", f"{target}-{mode[0]}", args.loop
                    )
                    try:
                        out[target][mode[0]] = measure(port, proc, mode, args.rounds)
                    finally:
                        proc.stop()
        finally:
            upstream.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requests", type=int, default=1000, help="requests per round (json, stream)"
    )
    parser.add_argument("--paced-requests", type=int, default=300, help="requests per round")
    parser.add_argument("--paced-concurrency", type=int, default=16)
    parser.add_argument("--pace-ms", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default=pt.default_loop(),
        help="event loop of the proxies measured (default: uvloop where installed)",
    )
    parser.add_argument(
        "--loom", action="store_true", help="measure loom-harness's proxy too (when installed)"
    )
    parser.add_argument(
        "--minimal", action="store_true", help="measure benchmarks/minimal_proxy.py too"
    )
    args = parser.parse_args(argv)
    print(json.dumps(run(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
