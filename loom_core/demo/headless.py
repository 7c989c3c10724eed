"""The offline demo without a window: fake model, a real proxy holding ``deploy*``, the agent.

Why: the desktop's demo must never die silently, and a failure that shows up once in
several runs is only caught by running it many times; this runs exactly the demo's
three parts (the proxy and the agent as the separate processes they are in the app)
and keeps everything each part printed, so a failing run says why.
``python -m loom_core.demo.headless [--runs N]`` does the same by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from loom_core.demo.fake_model import CONFIRM_PATTERN, FakeModelServer
from loom_core.proxy.control_client import ControlClient, ControlError

WAIT_S = 60.0  # one demo run takes a few seconds; this bounds a hung one


@dataclass
class DemoResult:
    """What one headless run did: the agent's exit code and everything printed."""

    code: int | None  # None: the agent did not finish within the time limit
    agent_out: str
    agent_err: str
    proxy_err: str
    held: bool  # the deploy call was held and decided

    @property
    def ok(self) -> bool:
        return self.code == 0 and self.held

    def report(self) -> str:
        """Everything a failed run printed, for a test failure or the terminal."""
        return (
            f"agent exit code {self.code}, held {self.held}\n--- agent stdout\n"
            f"{self.agent_out}--- agent stderr\n{self.agent_err}--- proxy stderr\n"
            f"{self.proxy_err}"
        )


def _wait_ready(ready: Path, proxy: subprocess.Popen[bytes], deadline: float) -> dict[str, object]:
    while time.monotonic() < deadline and proxy.poll() is None:
        try:
            return dict(json.loads(ready.read_text()))
        except (OSError, ValueError):
            time.sleep(0.02)
    raise RuntimeError("the proxy did not start")


def _decide(
    client: ControlClient, approve: bool | None, deadline: float, agent: subprocess.Popen[bytes]
) -> bool:
    """Approve (or deny) the held deploy call once it shows up (None: only wait for it)."""
    while time.monotonic() < deadline and agent.poll() is None:
        try:
            pending = client.pending()
        except ControlError:
            pending = []
        if pending:
            if approve is not None:
                client.decide(pending[0].id, approve)
            return True
        time.sleep(0.02)
    return False


def _stop(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate(timeout=10)


def run_demo(
    folder: str | Path,
    approve: bool | None = True,
    pace: float = 0.0,
    *,
    confirm_timeout: float = 120.0,
    kill_when_held: bool = False,
) -> DemoResult:
    """One demo run in ``folder`` (its trace, journal and token file go there).

    ``approve``: the decision on the held deploy call; None leaves it to time out after
    ``confirm_timeout`` seconds. ``kill_when_held``: kill the proxy (SIGKILL) while the
    call is held instead: it dies mid-run, and the agent's call fails."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LOOM_RUNTIME_DIR": str(folder / "runtime"), "PYTHONUNBUFFERED": "1"}
    ready, deadline = folder / "proxy.ready.json", time.monotonic() + WAIT_S
    model = FakeModelServer()
    url = model.start()
    proxy = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "loom_core",
            "proxy",
            "--port",
            "0",
            "--target",
            url,
            "--save",
            str(folder / "demo.loom.json"),
            "--ready-file",
            str(ready),
            "--confirm",
            CONFIRM_PATTERN,
            "--confirm-timeout",
            f"{confirm_timeout:g}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=folder,
        start_new_session=os.name == "posix",  # only we stop it, as the app does
    )
    agent = None
    try:
        info = _wait_ready(ready, proxy, deadline)
        agent = subprocess.Popen(
            [sys.executable, "-m", "loom_core.demo.agent", "--pace", f"{pace:g}"],
            env={**env, "ANTHROPIC_BASE_URL": str(info["url"])},
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=os.name == "posix",
        )
        port = int(str(info["port"]))
        client = ControlClient(port, token=_token(folder, port))  # not this process's runtime dir
        held = _decide(client, None if kill_when_held else approve, deadline, agent)
        if kill_when_held and held:
            proxy.kill()
        try:
            out, err = agent.communicate(timeout=max(1.0, deadline - time.monotonic()))
            code: int | None = agent.returncode
        except subprocess.TimeoutExpired:
            out, err = _stop(agent)
            code = None
    finally:
        if agent is not None and agent.poll() is None:
            _stop(agent)
        _, proxy_err = _stop(proxy)
        model.stop()

    def text(data: bytes) -> str:
        return data.decode("utf-8", "replace")

    return DemoResult(code, text(out), text(err), text(proxy_err), held)


def _token(folder: Path, port: int) -> str | None:
    try:
        return (folder / "runtime" / f"{port}.token").read_text().strip() or None
    except OSError:
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m loom_core.demo.headless",
        description="Run the offline demo without a window.",
    )
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--deny", action="store_true", help="deny the deploy instead of approving")
    p.add_argument("--pace", type=float, default=0.0, help="seconds between the agent's turns")
    args = p.parse_args(argv)
    failed = 0
    for n in range(args.runs):
        result = run_demo(tempfile.mkdtemp(prefix="loom-demo-"), not args.deny, args.pace)
        print(f"run {n + 1}: {'ok' if result.ok else 'FAILED'}", flush=True)
        if not result.ok:
            failed += 1
            print(result.report(), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
