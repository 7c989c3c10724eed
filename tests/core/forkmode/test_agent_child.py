"""The agent's child process: output drained whatever the viewer does, the whole
process group stopped on cancel."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import deque
from pathlib import Path

import pytest

from loom_core.fork.agent_child import run_child
from loom_core.providers.base import CancelToken

LOUD = "import sys\nfor i in range(30000): print('x' * 99, i)\nsys.exit(3)"
FAMILY = (
    "import subprocess, sys, time\n"
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "print('grandchild', p.pid, flush=True)\ntime.sleep(60)"
)


def alive(pid: int) -> bool:
    """True unless the process is gone or a zombie (PID 1 in a container may not reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_failing_viewer_does_not_stall_the_child(tmp_path: Path) -> None:
    def viewer(line: str) -> None:
        raise RuntimeError("viewer bug")

    tail: deque[str] = deque(maxlen=3)
    code, stopped = asyncio.run(
        run_child(
            [sys.executable, "-c", LOUD], str(tmp_path), dict(os.environ), 60, None, viewer, tail
        )
    )
    assert (code, stopped) == (3, None)  # 3 MB of output went through the pipe
    assert list(tail)[-1] == "x" * 99 + " 29999"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_cancel_stops_the_whole_process_group(tmp_path: Path) -> None:
    cancel, pids = CancelToken(), []

    def viewer(line: str) -> None:
        if line.startswith("grandchild "):
            pids.append(int(line.split()[1]))
            cancel.cancel()

    code, stopped = asyncio.run(
        run_child(
            [sys.executable, "-c", FAMILY],
            str(tmp_path),
            dict(os.environ),
            60,
            cancel,
            viewer,
            deque(),
        )
    )
    assert (code, stopped) == (None, "cancelled") and len(pids) == 1
    for _ in range(100):  # the orphan's reaping is asynchronous: bounded wait
        if not alive(pids[0]):
            break
        time.sleep(0.05)
    assert not alive(pids[0])
