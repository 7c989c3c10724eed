"""``python -m loom_core record [flags] -- COMMAND...``: record one command's model traffic.

A fresh proxy (free port unless ``--port``) runs in this process; COMMAND runs as a
child with ``ANTHROPIC_BASE_URL`` (and ``ANTHROPIC_API_BASE``) = the proxy and
``OPENAI_BASE_URL`` = the proxy + ``/v1`` -- both, so either SDK is recorded whatever
the target -- and loopback added to ``no_proxy`` / ``NO_PROXY`` so a corporate HTTP
proxy does not swallow the calls. When the child exits the trace is finalized with a
``workspace`` member (loom-format.md §6.9) and our exit code is the child's
(128 + N when a signal N killed it, like a shell).

Signals: SIGTERM is forwarded to the child (which then exits and we finalize).
SIGINT is not forwarded: Ctrl-C in a terminal reaches the child directly (same
process group), and a second copy would interrupt its own clean-up.
"""

from __future__ import annotations

import asyncio
import os
import platform
import signal
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

from loom_core.proxy.config import ProxyConfig
from loom_core.proxy.evloop import loop_factory, run_on
from loom_core.proxy.runner import start_proxy

_LOOPBACK = ("localhost", "127.0.0.1", "::1")


def child_env(base: dict[str, str], url: str) -> dict[str, str]:
    """The child's environment: both SDKs pointed at the proxy, loopback not proxied."""
    env = dict(base)
    env["ANTHROPIC_BASE_URL"] = url
    env["ANTHROPIC_API_BASE"] = url
    env["OPENAI_BASE_URL"] = url + "/v1"
    for name in ("no_proxy", "NO_PROXY"):
        have = [h.strip() for h in env.get(name, "").split(",") if h.strip()]
        env[name] = ",".join(have + [h for h in _LOOPBACK if h not in have])
    return env


def _git(args: list[str], cwd: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def collect_workspace(argv: list[str], dialect: str) -> dict[str, Any]:
    """§6.9 members: cwd, os, python, recorded_at, argv, dialect, and git when in a repo."""
    cwd = os.getcwd()
    info: dict[str, Any] = {
        "cwd": cwd,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "argv": list(argv),
        "dialect": dialect,
    }
    commit = _git(["rev-parse", "HEAD"], cwd)
    if commit:
        info["git"] = {
            "commit": commit,
            "branch": _git(["rev-parse", "--abbrev-ref", "HEAD"], cwd),
            "dirty": bool(_git(["status", "--porcelain"], cwd)),
        }
    return info


def _dialect(seen: set[str], target: str) -> str:
    """What the command spoke: the wire decides; the target only when nothing was seen."""
    if seen & {"openai", "responses"} and "anthropic" not in seen:
        return "openai"
    if seen:
        return "anthropic"
    return "openai" if "openai" in target else "anthropic"


async def record(config: ProxyConfig, argv: list[str]) -> int:
    """Run ``argv`` through a fresh recording proxy; returns the exit code to use."""
    workspace = await asyncio.to_thread(collect_workspace, argv, _dialect(set(), config.target))
    try:
        proxy = await start_proxy(config, workspace=workspace, announce=sys.stderr)
    except (OSError, ValueError) as err:  # ValueError: ReplayError, bad shield policy
        print(f"error: {err}", file=sys.stderr)
        return 2
    loop = asyncio.get_running_loop()
    try:
        try:
            child = await asyncio.create_subprocess_exec(
                *argv, env=child_env(dict(os.environ), proxy.url)
            )
        except OSError as err:
            print(f"error: cannot run {argv[0]}: {err.strerror or err}", file=sys.stderr)
            return 127
        loop.add_signal_handler(signal.SIGTERM, _forward, child, signal.SIGTERM)
        loop.add_signal_handler(signal.SIGINT, lambda: None)  # the child gets it from the tty
        try:
            code = await child.wait()
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
            loop.remove_signal_handler(signal.SIGINT)
    finally:
        session = proxy.session
        if session is not None:
            workspace["dialect"] = _dialect(session.dialects, config.target)
            session.workspace = workspace
        await proxy.close()
    if session is not None:
        log = session.recorder.log
        tokens = sum(
            sum((e["result"].get("usage") or {}).values()) for e in log if e["kind"] == "model"
        )
        print(f"recorded {len(log)} step(s), {tokens} tokens -> {config.save}", file=sys.stderr)
    return code if code >= 0 else 128 - code


def _forward(child: asyncio.subprocess.Process, sig: int) -> None:
    if child.returncode is None:
        child.send_signal(sig)


def main(config: ProxyConfig, argv: list[str]) -> int:
    try:
        factory = loop_factory(config.event_loop)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return run_on(record(config, argv), factory)
