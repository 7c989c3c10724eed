"""Benchmark: what the recording proxy costs, against a fake upstream and loom-harness.

    python benchmarks/proxy_overhead.py                  # human table, 3 rounds
    python benchmarks/proxy_overhead.py --loop asyncio   # ours on the standard loop
    python benchmarks/proxy_overhead.py --json           # one JSON line
    python benchmarks/proxy_overhead.py --quick --json --no-loom   # smoke run (tests)

The same load -- ``--requests`` POSTs of a realistic ~9 KB Anthropic Messages request
(system prompt, tool schemas, a tool-use history; the last user turn carries the
request's index so no two bodies are identical) -- is sent at concurrency 1 and 8,
non-streaming (``json``), streaming with 50 SSE events (``stream``) and streaming
with the upstream pacing events ``--pace-ms`` apart (``paced``; fewer requests, it
is slow by design), to three targets:

* ``direct`` -- the fake upstream itself;
* ``ours``   -- ``python -m loom_core proxy`` in front of it (recording to a temp dir);
* ``loom``   -- loom-harness's ``loom proxy`` (the ``loom`` console script next to
  ``sys.executable``; skipped with ``--no-loom`` or when it is not installed);
* ``minimal`` -- ``benchmarks/minimal_proxy.py``, a bare aiohttp pass-through that
  appends one JSONL line per exchange: the floor any recording proxy sits on here
  (skipped with ``--no-minimal``).

The fake upstream is this file run as ``--serve-upstream PORTFILE``: an aiohttp
server on 127.0.0.1 in its own process (so it shares neither event loop nor GIL
with the load generator). Each proxy is a fresh process per scenario (so a trace
that grows over one scenario does not slow the next). The load generator
is one aiohttp client session in this process, concurrency bounded by a semaphore,
every request bounded by a timeout and every scenario by ``--scenario-seconds``.

Rounds: per scenario, ``--rounds`` times, every target takes the scenario's load in
turn, the order rotated per round, so load elsewhere on a shared machine falls on
all targets alike; every figure is the median over the rounds (``rps_rounds`` keeps each
round's requests/s). ``--loop`` picks the event loop of ours and of the minimal
pass-through (uvloop by default where it is installed); the load generator, the
upstream and loom-harness are the same in both. ``--both-loops`` adds our proxy on
the other loop as a fifth target (``ours_other_loop``) in the same rounds.

Per target and scenario: requests/s, p50/p99/max latency (request sent -> last byte
read) and, for streams, time to the first body byte (``ttfb``). ``ratios`` compares
ours with direct, loom-harness and the minimal pass-through (``ours_vs_X_rps``:
ours' requests/s over X's) and says what each proxy adds to direct
(``X_added_p50_ms``, ``X_added_ttfb_p50_ms``). ``goals`` judges issue 14's proxy
goals on these (each with what it compares, its value, and met or not; ``targets``
is the same as booleans). ``stall`` (information): the longest single exchange of
``--stall-requests`` sequential non-streaming exchanges through one proxy of ours,
``stall_direct`` the same against the upstream directly (the machine's noise).
The load average before and after is in ``config``. Every process started is
killed and reaped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import proxy_goals as pg  # noqa: E402  (medians, ratios, goals, the table)

ROOT = Path(__file__).resolve().parent.parent
MODEL = "claude-sonnet-4-5"
STREAM_EVENTS = 50  # message_start, content_block_start, 45 deltas, block_stop, message_delta, stop
REQUEST_TIMEOUT = 30.0  # seconds, per request
START_TIMEOUT = 20.0  # seconds, for a process to become ready
OTHER_LOOP = "ours_other_loop"  # --both-loops: ours on the loop --loop does not name


# --------------------------------------------------------------------------- the request


def _request_template() -> bytes:
    """A ~9 KB Messages request with placeholders for the index, stream flag, pacing."""
    tools = [
        {
            "name": name,
            "description": desc * 3,
            "input_schema": {"type": "object", "properties": props, "required": list(props)[:1]},
        }
        for name, desc, props in (
            (
                "Read",
                "Read a file from the local filesystem and return its contents. ",
                {
                    "file_path": {"type": "string", "description": "absolute path of the file"},
                    "offset": {"type": "integer", "description": "line to start reading at"},
                    "limit": {"type": "integer", "description": "number of lines to read"},
                },
            ),
            (
                "Edit",
                "Replace an exact string in a file with another string. ",
                {
                    "file_path": {"type": "string", "description": "absolute path of the file"},
                    "old_string": {"type": "string", "description": "the text to replace"},
                    "new_string": {"type": "string", "description": "the replacement text"},
                },
            ),
            (
                "Bash",
                "Run a shell command in the workspace and return its output. ",
                {
                    "command": {"type": "string", "description": "the command to run"},
                    "timeout": {"type": "integer", "description": "milliseconds before kill"},
                },
            ),
            (
                "Grep",
                "Search file contents with a regular expression. ",
                {
                    "pattern": {"type": "string", "description": "the regular expression"},
                    "path": {"type": "string", "description": "where to search"},
                },
            ),
        )
    ]
    code = "".join(
        f"    {i:3d}  def handler_{i}(request):\n"
        f"             return render(request, 'page_{i}.html')\n"
        for i in range(48)
    )
    messages = [
        {
            "role": "user",
            "content": "The tests in tests/test_views.py fail since yesterday's "
            "refactor. Find out why and fix it, then run the suite.",
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I'll start by reading the failing test module."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "Read",
                    "input": {"file_path": "/repo/app/views.py"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": code}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Now let me run the failing tests to see the error."},
                {
                    "type": "tool_use",
                    "id": "toolu_01B",
                    "name": "Bash",
                    "input": {"command": "python -m pytest tests/test_views.py -x -q"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B",
                    "content": "F\n"
                    + "E   TemplateDoesNotExist: page_7.html\n" * 20
                    + "1 failed, 23 passed in 0.52s",
                }
            ],
        },
        # Each request ends with a fresh tool round trip (ids and output carry the
        # request's index): an agent loop within one episode, as a real run looks.
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_@@INDEX@@",
                    "name": "Bash",
                    "input": {
                        "command": "python -m pytest tests/test_views.py -q -k step_@@INDEX@@"
                    },
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_@@INDEX@@",
                    "content": "24 passed in 0.@@INDEX@@s",
                }
            ],
        },
    ]
    body = {
        "model": MODEL,
        "max_tokens": 4096,
        "system": "You are a careful coding agent working in a Python repository. " * 20,
        "tools": tools,
        "messages": messages,
        "stream": "@@STREAM@@",
        "metadata": {"user_id": "@@PACE@@"},
    }
    return json.dumps(body).encode()


_TEMPLATE = _request_template()


def request_body(index: int, stream: bool, pace_ms: float) -> bytes:
    body = _TEMPLATE.replace(b'"@@STREAM@@"', b"true" if stream else b"false")
    body = body.replace(b"@@PACE@@", f"pace-{pace_ms:g}".encode())
    return body.replace(b"@@INDEX@@", str(index).encode())


# --------------------------------------------------------------------------- fake upstream


def _message(text: str) -> dict[str, Any]:
    return {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 2100, "output_tokens": 45},
    }


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _stream_events() -> list[bytes]:
    words = [f"word{i} " for i in range(STREAM_EVENTS - 5)]
    start = _message("")
    start["content"], start["stop_reason"] = [], None
    start["usage"] = {"input_tokens": 2100, "output_tokens": 1}
    events = [
        _sse("message_start", {"type": "message_start", "message": start}),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    events += [
        _sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}},
        )
        for w in words
    ]
    events += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": len(words)},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    assert len(events) == STREAM_EVENTS
    return events


def serve_upstream(port_file: str) -> int:
    """Run the fake Anthropic upstream until SIGTERM; its port goes to ``port_file``."""
    from aiohttp import web

    reply = json.dumps(
        _message("Fixed: views.py referenced page_7.html after the rename. All 24 tests pass now.")
    ).encode()
    events = _stream_events()

    async def messages(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        try:
            parsed = json.loads(body)
        except ValueError:
            return web.json_response(
                {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "bad json"},
                },
                status=400,
            )
        if not parsed.get("stream"):
            return web.Response(
                body=reply, content_type="application/json", headers={"request-id": "req_bench"}
            )
        user = str((parsed.get("metadata") or {}).get("user_id", ""))
        pace = float(user[5:]) / 1000 if user.startswith("pace-") else 0.0
        resp = web.StreamResponse(
            headers={
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
                "request-id": "req_bench",
            }
        )
        await resp.prepare(request)
        for i, event in enumerate(events):
            if pace and i:
                await asyncio.sleep(pace)
            await resp.write(event)
        await resp.write_eof()
        return resp

    async def main() -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", messages)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        tmp = port_file + ".tmp"
        Path(tmp).write_text(json.dumps({"port": port, "pid": os.getpid()}))
        os.replace(tmp, port_file)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await runner.cleanup()

    asyncio.run(main())
    return 0


# --------------------------------------------------------------------------- processes


class Proc:
    """A child process that is always killed and reaped (``stop`` in a ``finally``)."""

    def __init__(self, cmd: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                cmd,
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise RuntimeError(
                f"{self.proc.args[:4]} exited early: {self.log.read_text(errors='replace')[-2000:]}"
            )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # let it finalize its trace
            try:
                self.proc.wait(10)
                return
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.wait(10)


def _wait(predicate: Any, proc: Proc, what: str) -> Any:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        proc.check_alive()
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise RuntimeError(f"timed out waiting for {what}")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(cmd: list[str], log: Path, info_file: Path, what: str) -> tuple[Proc, int]:
    """Start ``cmd`` and wait for the JSON file naming its port (killed on failure)."""
    proc = Proc(cmd, log)
    try:
        info = _wait(lambda: _read_json(info_file), proc, what)
    except BaseException:
        proc.stop()
        raise
    return proc, int(info["port"])


def start_upstream(tmp: Path) -> tuple[Proc, int]:
    port_file = tmp / "upstream.port.json"
    return _start(
        [sys.executable, str(Path(__file__).resolve()), "--serve-upstream", str(port_file)],
        tmp / "upstream.log",
        port_file,
        "the fake upstream",
    )


def default_loop() -> str:
    """uvloop where it is installed (as our proxy's ``--event-loop auto``), else asyncio."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def start_ours(tmp: Path, target: str, name: str, loop: str = "auto") -> tuple[Proc, int]:
    ready = tmp / f"{name}.ready.json"
    proc, port = _start(
        [
            sys.executable,
            "-m",
            "loom_core",
            "proxy",
            "--port",
            "0",
            "--save",
            str(tmp / f"{name}.loom.json"),
            "--ready-file",
            str(ready),
            "--target",
            target,
            "--event-loop",
            loop,
        ],
        tmp / f"{name}.log",
        ready,
        "our proxy's ready file",
    )
    running = (_read_json(ready) or {}).get("event_loop")
    if loop != "auto" and running != loop:
        proc.stop()
        raise RuntimeError(f"our proxy runs on {running}, not on the {loop} asked for")
    return proc, port


def start_minimal(tmp: Path, target: str, name: str, loop: str = "asyncio") -> tuple[Proc, int]:
    port_file = tmp / f"{name}.port.json"
    return _start(
        [
            sys.executable,
            str(Path(__file__).resolve().parent / "minimal_proxy.py"),
            str(port_file),
            target,
            loop,
        ],
        tmp / f"{name}.log",
        port_file,
        "the minimal pass-through",
    )


def loom_executable() -> str | None:
    path = Path(sys.executable).parent / "loom"
    return str(path) if path.exists() else shutil.which("loom")


def start_loom(tmp: Path, target: str, name: str) -> tuple[Proc, int]:
    exe = loom_executable()
    assert exe is not None
    port = _free_port()
    env_home = tmp / f"{name}.home"  # its control token goes here, not in ~/.loom
    env_home.mkdir(exist_ok=True)
    proc = Proc(
        [
            exe,
            "proxy",
            "--port",
            str(port),
            "--target",
            target,
            "--save",
            str(tmp / f"{name}.loom.json"),
        ],
        tmp / f"{name}.log",
        env={**os.environ, "LOOM_RUNTIME_DIR": str(env_home)},
    )
    try:
        _wait(lambda: _accepts(port), proc, "loom-harness's proxy")
    except BaseException:
        proc.stop()
        raise
    return proc, port


# --------------------------------------------------------------------------- load


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
) -> tuple[Proc | None, int]:
    """A fresh process of ``target`` in front of the upstream (``direct``: none)."""
    target_url = f"http://127.0.0.1:{up_port}"
    if target == "ours":
        return start_ours(tmp, target_url, f"ours-{name}", args.loop)
    if target == OTHER_LOOP:
        other = "asyncio" if args.loop == "uvloop" else "uvloop"
        return start_ours(tmp, target_url, f"ours-other-{name}", other)
    if target == "minimal":
        return start_minimal(tmp, target_url, f"minimal-{name}", args.loop)
    if target == "loom":
        return start_loom(tmp, target_url, f"loom-{name}")
    return None, up_port


def run_rounds(
    args: argparse.Namespace, tmp: Path, up_port: int, targets: list[str]
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Per scenario, a fresh process of every target, then ``--rounds`` rounds in which
    every target takes the scenario's load in turn (the order rotated per round), so a
    burst of load elsewhere on the machine falls on all targets alike."""
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {t: {} for t in targets}
    for name, n, c, stream, pace in scenarios(args):
        procs: list[Proc] = []
        try:
            ports = {}
            for target in targets:
                proc, ports[target] = _start_target(args, tmp, target, up_port, name)
                if proc is not None:
                    procs.append(proc)
            for r in range(args.rounds):
                shift = r % len(targets)
                for target in targets[shift:] + targets[:shift]:
                    row = asyncio.run(
                        run_load(ports[target], n, c, stream, pace, args.scenario_seconds)
                    )
                    rows[target].setdefault(name, []).append(row)
                    if not args.json:
                        print(
                            f"  round {r + 1} {target:7s} {name:10s} {row}",
                            file=sys.stderr,
                            flush=True,
                        )
        finally:
            for proc in procs:
                proc.stop()
    return rows


def _stall(args: argparse.Namespace, tmp: Path, up_port: int) -> tuple[dict[str, Any], ...]:
    """The longest of ``--stall-requests`` sequential exchanges, direct and through ours."""
    direct = asyncio.run(
        run_load(up_port, args.stall_requests, 1, False, 0.0, args.scenario_seconds * 4)
    )  # the noise floor
    proxy, port = start_ours(tmp, f"http://127.0.0.1:{up_port}", "ours-stall", args.loop)
    try:
        ours = asyncio.run(
            run_load(port, args.stall_requests, 1, False, 0.0, args.scenario_seconds * 4)
        )
    finally:
        proxy.stop()
    return ours, direct


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    targets = ["direct", "ours"]
    loom = None if args.no_loom else loom_executable()
    if loom is not None:
        targets.append("loom")
    if not args.no_minimal:
        targets.append("minimal")
    if args.both_loops:
        targets.append(OTHER_LOOP)
    load_before = _load_average()
    tmp = Path(tempfile.mkdtemp(prefix="loom-proxy-bench-"))
    upstream: Proc | None = None
    try:
        upstream, up_port = start_upstream(tmp)
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
    # First byte: the unsaturated stream scenarios (at concurrency 8 the unpaced stream
    # saturates the CPUs, so its first byte mostly measures queueing; it is in ratios).
    first_byte = [n for n, _, c, s, pace in scenarios(args) if s and (c == 1 or pace)]
    goals = pg.goals(ratios, first_byte, "loom" in results)
    out = {
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
        },
    }
    for name in ("loom", "minimal", OTHER_LOOP):
        if name not in results:
            out[name] = None
    return _nan_to_none(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--serve-upstream", metavar="PORTFILE", help="run the fake upstream (internal)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 round, 200 requests, few paced, 500 stall exchanges",
    )
    parser.add_argument("--no-loom", action="store_true", help="skip loom-harness's proxy")
    parser.add_argument(
        "--no-minimal", action="store_true", help="skip the minimal pass-through baseline"
    )
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default=default_loop(),
        help="event loop of our proxy and the minimal pass-through (default: "
        "uvloop where installed); the load and the upstream stay on asyncio",
    )
    parser.add_argument(
        "--both-loops",
        action="store_true",
        help=f"also run ours on the other loop, as target {OTHER_LOOP!r} in "
        "the same rounds (the loops compared under the same load)",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds; the figures are their medians"
    )
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument(
        "--paced-requests",
        type=int,
        default=80,
        help="requests of the paced scenario at concurrency 8 (a quarter at 1)",
    )
    parser.add_argument(
        "--pace-ms",
        type=float,
        default=10.0,
        help="upstream gap between SSE events in the paced scenario (0 = skip)",
    )
    parser.add_argument("--stall-requests", type=int, default=10_000)
    parser.add_argument(
        "--scenario-seconds",
        type=float,
        default=120.0,
        help="stop issuing requests in a scenario after this long",
    )
    args = parser.parse_args(argv)
    if args.serve_upstream:
        return serve_upstream(args.serve_upstream)
    if args.quick:
        args.requests, args.paced_requests, args.stall_requests = 200, 8, 500
        args.rounds = 1
        args.scenario_seconds = min(args.scenario_seconds, 20.0)
    res = benchmark(args)
    if args.json:
        print(json.dumps(res))
    else:
        print(pg.table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
