"""Proxy processes for tests that need a real process: signals, ``kill -9``, ``record``.

Every process started here is owned by the test through :class:`ProxyProcess`, a
context manager that kills and reaps it on the way out, whatever happened.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.core.clis import ROOT


def wait_for(predicate: Callable[[], Any], seconds: float = 15.0, what: str = "condition") -> Any:
    """Poll ``predicate`` every 20 ms until truthy; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class ProxyProcess:
    """``python -m loom_core proxy …`` with a ready file; output goes to files in ``tmp``."""

    def __init__(
        self,
        tmp: Path,
        *flags: str,
        name: str = "proxy",
        ignore_sigint: bool = False,
        env: dict[str, str] | None = None,
        max_file_size: int | None = None,
    ) -> None:
        """``env``: added to this process's environment; ``max_file_size``: no file the
        proxy writes may grow past this many bytes (``RLIMIT_FSIZE``, with ``SIGXFSZ``
        ignored), so a write past it fails in the kernel as on a full disk."""
        self.ready_file = tmp / f"{name}.ready.json"
        self.out, self.err = tmp / f"{name}.stdout", tmp / f"{name}.stderr"
        cmd = [
            sys.executable,
            "-m",
            "loom_core",
            "proxy",
            "--port",
            "0",
            "--ready-file",
            str(self.ready_file),
            *flags,
        ]

        def child_setup() -> None:
            if ignore_sigint:  # what a background job of a non-interactive shell inherits
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            if max_file_size is not None:
                import resource

                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
                resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_size, max_file_size))

        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                cmd,
                cwd=ROOT,
                stdout=out,
                stderr=err,
                env={**os.environ, **env} if env else None,
                preexec_fn=child_setup if ignore_sigint or max_file_size is not None else None,
            )
        self.ready: dict[str, Any] = {}

    def __enter__(self) -> ProxyProcess:
        try:
            self.ready = wait_for(self._read_ready, what="the proxy's ready file")
        except BaseException:
            self.kill()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def _read_ready(self) -> dict[str, Any] | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"proxy exited early: {self.err.read_text()}")
        try:
            return json.loads(self.ready_file.read_text())
        except (OSError, ValueError):
            return None

    @property
    def url(self) -> str:
        return str(self.ready["url"])

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        """Send ``sig`` and wait for a clean exit; returns the exit code."""
        self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
