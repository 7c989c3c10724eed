"""Benchmark: what the recording proxy costs, against its floor and two peers.

    make bench-proxy                                     # every peer, 3 rounds (the entry point)
    python benchmarks/proxy_overhead.py                  # the same without mitmproxy unless found
    python benchmarks/proxy_overhead.py --json           # one JSON line
    python benchmarks/proxy_overhead.py --quick --json --no-loom --no-mitm   # smoke run (tests)

The same load -- ``--requests`` POSTs of a realistic ~9 KB Anthropic Messages request
(:mod:`proxy_upstream`) -- is sent at concurrency 1 and 8, non-streaming (``json``),
streaming with 50 SSE events (``stream``) and streaming with the upstream pacing events
``--pace-ms`` apart (``paced``; fewer requests, slow by design), to every target
(:mod:`proxy_targets`): ``direct`` (the fake upstream itself), ``ours``, the bare
aiohttp pass-through that appends one line per exchange (``minimal``: the floor),
loom-harness's proxy (``loom``) and mitmproxy in reverse-proxy mode (``mitm``, found by
``--mitmdump`` or in ``.venv-bench``; ``make bench-proxy`` installs it there).

Rounds: per scenario a fresh process of every target, then ``--rounds`` rounds in
which every target takes the load in turn (the order rotated per round), so load
elsewhere on a shared machine falls on all alike; every figure is the median over
the rounds (``rps_rounds`` keeps each round's requests/s). After a target's turn the
next waits until its process is idle (:func:`proxy_targets.settle`), so work a
target defers -- ours rewrites its trace once exchanges pause -- never runs in
another target's turn. ``--loop`` picks the event loop of ours and of the bare
pass-through (uvloop where installed); ``--both-loops`` adds ours on the other loop.

Printed: per target and scenario requests/s, p50/p99 latency (sent -> last byte) and
for streams the first body byte (``ttfb``); every ratio ours / bare, ours / loom-harness,
ours / mitmproxy with its goal; what each target adds to direct; issue 24's goals
(:mod:`proxy_goals`) each with its value and met / NOT met; the longest of
``--stall-requests`` sequential exchanges through ours (information); the load average
before and after. Every process started is stopped and reaped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import proxy_goals as pg  # noqa: E402
import proxy_targets as pt  # noqa: E402
from proxy_load import run_load  # noqa: E402
from proxy_upstream import STREAM_EVENTS, request_body  # noqa: E402

OTHER_LOOP = "ours_other_loop"  # --both-loops: ours on the loop --loop does not name
PEERS = ("loom", "mitm", "minimal", OTHER_LOOP)


def scenarios(args: argparse.Namespace) -> list[tuple[str, int, int, bool, float]]:
    """(name, requests, concurrency, stream, pace_ms)."""
    out = []
    for c in (1, 8):
        out.append((f"json_c{c}", args.requests, c, False, 0.0))
        out.append((f"stream_c{c}", args.requests, c, True, 0.0))
    if args.pace_ms > 0:
        out.append(("paced_c1", args.paced_requests // 4 or 1, 1, True, args.pace_ms))
        out.append(("paced_c8", args.paced_requests, 8, True, args.pace_ms))
    return out


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    return value


def _load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def _start_target(
    args: argparse.Namespace, tmp: Path, target: str, up_port: int, name: str
) -> tuple[pt.Proc | None, int]:
    """A fresh process of ``target`` in front of the upstream (``direct``: none)."""
    url = f"http://127.0.0.1:{up_port}"
    if target == "ours":
        return pt.start_ours(tmp, url, f"ours-{name}", args.loop)
    if target == OTHER_LOOP:
        other = "asyncio" if args.loop == "uvloop" else "uvloop"
        return pt.start_ours(tmp, url, f"ours-other-{name}", other)
    if target == "minimal":
        return pt.start_minimal(tmp, url, f"minimal-{name}", args.loop)
    if target == "loom":
        return pt.start_loom(tmp, url, f"loom-{name}")
    if target == "mitm":
        return pt.start_mitm(tmp, url, f"mitm-{name}", args.mitmdump)
    return None, up_port


def run_rounds(
    args: argparse.Namespace, tmp: Path, up_port: int, targets: list[str]
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Per scenario, a fresh process of every target, then the rounds (module docstring)."""
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {t: {} for t in targets}
    for name, n, c, stream, pace in scenarios(args):
        procs: dict[str, pt.Proc] = {}
        try:
            ports = {}
            for target in targets:
                proc, ports[target] = _start_target(args, tmp, target, up_port, name)
                if proc is not None:
                    procs[target] = proc
            for r in range(args.rounds):
                shift = r % len(targets)
                for target in targets[shift:] + targets[:shift]:
                    row = asyncio.run(
                        run_load(ports[target], n, c, stream, pace, args.scenario_seconds)
                    )
                    if target in procs:
                        pt.settle(procs[target])
                    rows[target].setdefault(name, []).append(row)
                    if not args.json:
                        print(f"  round {r + 1} {target:7s} {name:10s} {row}", file=sys.stderr)
        finally:
            for proc in procs.values():
                proc.stop()
    return rows


def _stall(args: argparse.Namespace, tmp: Path, up_port: int) -> tuple[dict[str, Any], ...]:
    """The longest of ``--stall-requests`` sequential exchanges, direct and through ours."""
    seconds = args.scenario_seconds * 4
    direct = asyncio.run(run_load(up_port, args.stall_requests, 1, False, 0.0, seconds))
    proxy, port = pt.start_ours(tmp, f"http://127.0.0.1:{up_port}", "ours-stall", args.loop)
    try:
        ours = asyncio.run(run_load(port, args.stall_requests, 1, False, 0.0, seconds))
    finally:
        proxy.stop()
    return ours, direct


def _targets(args: argparse.Namespace) -> list[str]:
    targets = ["direct", "ours"]
    if not args.no_loom and pt.loom_executable() is not None:
        targets.append("loom")
    if not args.no_mitm:
        args.mitmdump = pt.mitmdump_executable(args.mitmdump)
        if args.mitmdump is not None:
            targets.append("mitm")
        else:
            print("mitmproxy not found (make bench-proxy installs it): skipped", file=sys.stderr)
    if not args.no_minimal:
        targets.append("minimal")
    if args.both_loops:
        targets.append(OTHER_LOOP)
    return targets


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    targets = _targets(args)
    load_before = _load_average()
    tmp = Path(tempfile.mkdtemp(prefix="loom-proxy-bench-"))
    upstream: pt.Proc | None = None
    try:
        upstream, up_port = pt.start_upstream(tmp)
        rows = run_rounds(args, tmp, up_port, targets)
        stall, stall_direct = _stall(args, tmp, up_port)
    finally:
        if upstream is not None:
            upstream.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    results: dict[str, Any] = {
        t: {name: pg.median_row(per) for name, per in rows[t].items()} for t in targets
    }
    ratios = {name: pg.scenario_ratios(results, name) for name, *_ in scenarios(args)}
    goals = pg.goals(ratios)
    out = {
        **{peer: None for peer in PEERS},
        **results,
        "ratios": ratios,
        "goals": goals,
        "targets": {name: g["met"] for name, g in goals.items()},
        "stall_ms_max": stall["max_ms"],
        "stall": stall,
        "stall_direct": stall_direct,
        "config": {
            "requests": args.requests,
            "paced_requests": args.paced_requests,
            "pace_ms": args.pace_ms,
            "stall_requests": args.stall_requests,
            "rounds": args.rounds,
            "loop": args.loop,
            "load_before": load_before,
            "load_after": _load_average(),
            "stream_events": STREAM_EVENTS,
            "request_bytes": len(request_body(0, False, 0.0)),
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "mitmdump": args.mitmdump if "mitm" in targets else None,
        },
    }
    return _nan_to_none(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--json", action="store_true", help="print one JSON line")
    add("--quick", action="store_true", help="smoke run: 1 round, 200 requests, few paced")
    add("--no-loom", action="store_true", help="skip loom-harness's proxy")
    add("--no-mitm", action="store_true", help="skip mitmproxy")
    add("--mitmdump", help="the mitmdump to run (default: .venv-bench's, else PATH's)")
    add("--no-minimal", action="store_true", help="skip the bare pass-through (the floor)")
    add(
        "--loop",
        choices=("asyncio", "uvloop"),
        default=pt.default_loop(),
        help="event loop of ours and the bare pass-through (default: uvloop where installed)",
    )
    add("--both-loops", action="store_true", help=f"also ours on the other loop ({OTHER_LOOP})")
    add("--rounds", type=int, default=3, help="interleaved rounds; figures are their medians")
    add("--requests", type=int, default=2000)
    add("--paced-requests", type=int, default=80, help="paced requests at c8 (a quarter at c1)")
    add("--pace-ms", type=float, default=10.0, help="upstream gap between paced events (0: skip)")
    add("--stall-requests", type=int, default=10_000)
    add("--scenario-seconds", type=float, default=120.0, help="stop a scenario's load after this")
    args = parser.parse_args(argv)
    if args.quick:
        args.requests, args.paced_requests, args.stall_requests = 200, 8, 500
        args.rounds = 1
        args.scenario_seconds = min(args.scenario_seconds, 20.0)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    res = benchmark(args)
    print(json.dumps(res) if args.json else pg.table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
