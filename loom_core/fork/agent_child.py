"""Run a recorded agent's command as a child: its output handed on line by line, and a
bounded, cancellable wait that stops the child's whole process group.

Why its own process group: an agent (a CLI coding agent, a script) often starts
processes of its own; stopping only the direct child would leave them running and
holding its output pipe. The group gets SIGTERM, then SIGKILL after :data:`GRACE`
seconds. (Windows: the child alone, ``terminate`` then ``kill``.)
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Callable

from loom_core.providers.base import CancelToken

GRACE = 5.0  # seconds between SIGTERM and SIGKILL, and for the output pipe to drain
POLL = 0.05  # seconds between looks at the cancel token


async def run_child(
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    timeout: float,
    cancel: CancelToken | None,
    on_line: Callable[[str], None] | None,
    tail: deque[str],
) -> tuple[int | None, str | None]:
    """Run ``argv`` to its end or stop it; returns (exit code, ``"cancelled"`` /
    ``"timeout"`` / None). The exit code is None when stopped, ``128 + N`` when a
    signal N ended it (like a shell). Raises OSError when it cannot start."""
    child = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=os.name == "posix",
    )
    assert child.stdout is not None
    pump = asyncio.ensure_future(_pump(child.stdout, on_line, tail))
    waiter = asyncio.ensure_future(child.wait())
    loop = asyncio.get_running_loop()
    deadline, stopped = loop.time() + timeout, None
    try:
        while not waiter.done():
            if cancel is not None and cancel.cancelled:
                stopped = "cancelled"
            elif loop.time() >= deadline:
                stopped = "timeout"
            if stopped:
                break
            await asyncio.wait({waiter}, timeout=min(POLL, max(0.0, deadline - loop.time())))
    finally:
        if not waiter.done():
            await _stop(child)
        await waiter
        try:
            await asyncio.wait_for(pump, GRACE)  # a grandchild may hold the pipe open
        except TimeoutError:
            pass
    code = child.returncode
    return (None if stopped or code is None else (code if code >= 0 else 128 - code)), stopped


async def _pump(
    stream: asyncio.StreamReader, on_line: Callable[[str], None] | None, tail: deque[str]
) -> None:
    """Hand the output on line by line (any line length); the pipe is always drained,
    even when ``on_line`` fails, or the child would block on a full pipe."""
    buf = b""
    callback = [on_line]

    def emit(raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        tail.append(text)
        if callback[0] is not None:
            try:
                callback[0](text)
            except Exception as err:  # noqa: BLE001 - a viewer's bug must not stall the agent
                callback[0] = None
                print(
                    f"loom: agent output callback failed ({err!r}); output no longer shown",
                    file=sys.stderr,
                    flush=True,
                )

    while chunk := await stream.read(65536):
        *lines, buf = (buf + chunk).split(b"\n")
        for line in lines:
            emit(line)
    if buf:
        emit(buf)


def _signal(child: asyncio.subprocess.Process, sig: int) -> None:
    try:
        if os.name == "posix":
            os.killpg(child.pid, sig)
        elif sig == signal.SIGTERM:
            child.terminate()
        else:
            child.kill()
    except (ProcessLookupError, PermissionError):
        pass


async def _stop(child: asyncio.subprocess.Process) -> None:
    """SIGTERM to the child's process group, SIGKILL after :data:`GRACE` seconds."""
    _signal(child, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(child.wait()), GRACE)
    except TimeoutError:
        _signal(child, getattr(signal, "SIGKILL", signal.SIGTERM))
