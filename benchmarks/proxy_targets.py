"""The proxy benchmark's processes: the fake upstream and every target in front of it.

Each target is a fresh process started per scenario, ready when its port answers:

* ``ours`` -- ``python -m loom_core proxy`` (recording to a temp dir);
* ``minimal`` -- :mod:`minimal_proxy`, a bare aiohttp pass-through that appends one
  JSON line per exchange: the floor any aiohttp recording proxy sits on here;
* ``loom`` -- loom-harness's ``loom proxy`` (the console script next to
  ``sys.executable``, from the test lock);
* ``mitm`` -- mitmproxy's ``mitmdump --mode reverse:URL``, saving every flow to a
  file (``-w``) like the others record: installed for the benchmark only, in a venv
  of its own (``make bench-proxy`` builds ``.venv-bench``), never in the app's or the
  test lock. Its default buffers an SSE response whole before relaying it
  (mitmproxy issue 4469), and so it is measured.

Every :class:`Proc` is stopped (SIGTERM, then SIGKILL) and reaped by its owner.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
START_TIMEOUT = 20.0  # seconds, for a process to become ready


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
        [sys.executable, str(BENCH / "proxy_upstream.py"), str(port_file)],
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
            str(BENCH / "minimal_proxy.py"),
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
    return _listening(proc, port, "loom-harness's proxy")


def _listening(proc: Proc, port: int, what: str) -> tuple[Proc, int]:
    """``proc`` once ``port`` accepts connections (stopped if it never does)."""
    try:
        _wait(lambda: _accepts(port), proc, what)
    except BaseException:
        proc.stop()
        raise
    return proc, port


def mitmdump_executable(given: str | None = None) -> str | None:
    """``given``, else the bench venv's ``mitmdump`` (``make bench-proxy``), else PATH's."""
    if given:
        return given
    local = ROOT / ".venv-bench" / "bin" / "mitmdump"
    return str(local) if local.exists() else shutil.which("mitmdump")


def start_mitm(tmp: Path, target: str, name: str, exe: str) -> tuple[Proc, int]:
    port = _free_port()
    proc = Proc(
        [
            exe,
            "--mode",
            f"reverse:{target}",
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            str(port),
            "-q",
            "-w",
            str(tmp / f"{name}.flows"),
            "--set",
            f"confdir={tmp / (name + '.conf')}",  # its CA files go here, not in ~/.mitmproxy
        ],
        tmp / f"{name}.log",
    )
    return _listening(proc, port, "mitmproxy")


TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of ``pid`` (fields 14 and 15 of /proc/<pid>/stat); None off Linux."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / TICKS


def settle(proc: Proc, quiet: float = 0.5, limit: float = 30.0) -> None:
    """Wait until ``proc`` has used no CPU for ``quiet`` s: what it deferred is done
    (bounded by ``limit``; a plain ``quiet`` s wait where /proc is not there)."""
    pid = proc.proc.pid
    last, still = cpu_seconds(pid), time.monotonic()
    if last is None:
        time.sleep(quiet)
        return
    deadline = still + limit
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = cpu_seconds(pid)
        if now != last:
            last, still = now, time.monotonic()
        elif time.monotonic() - still >= quiet:
            return
