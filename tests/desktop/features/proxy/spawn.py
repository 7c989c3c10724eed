"""A ``python -m loom_core proxy`` child with a ready file, as a previous run of the app left it.

The caller owns the process: :func:`ready_proxy` is a context manager that kills and
reaps it on the way out, whatever happened.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

READY_S = 30.0


@contextmanager
def ready_proxy(ready: Path, save: Path, *flags: str) -> Iterator[subprocess.Popen[bytes]]:
    """The proxy, once its ready file exists (``flags``: more proxy flags)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "loom_core", "proxy", "--port", "0", "--ready-file", str(ready)]
        + ["--save", str(save), "--target", "http://127.0.0.1:9", *flags],
        cwd=save.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + READY_S
        while not ready.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert ready.exists(), proc.stderr.read() if proc.poll() is not None else "no ready file"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()
