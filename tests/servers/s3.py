"""A real S3 API on 127.0.0.1 for the run-store tests: moto's server mode, in a process.

Why a process and not moto's in-process mock: the publish and open paths run in other
processes too (the CLI, a second "laptop"), and they must reach the bucket the way they
reach AWS: over HTTP, with credentials from the standard chain (here the environment:
``AWS_ACCESS_KEY_ID`` … and ``AWS_ENDPOINT_URL``, which botocore reads itself).
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from tests.core.children import SESSION_CHILDREN
from tests.servers.postgres import free_port

START_SECONDS = 60.0


@dataclass
class S3Server:
    """moto's S3 server; :meth:`env` is what a client process needs to reach it."""

    port: int = 0
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        SESSION_CHILDREN.add(self.process.pid)  # kept for the session, not a test's leftover
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=2).close()
                return
            except (urllib.error.URLError, OSError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("moto's S3 server did not start") from None
                time.sleep(0.05)

    def env(self) -> dict[str, str]:
        """The standard AWS variables pointing a client at this server."""
        return {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": self.endpoint,
        }

    def make_bucket(self, name: str) -> str:
        """A new bucket; its ``s3://`` URL."""
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        urllib.request.urlopen(request, timeout=10).close()
        return f"s3://{name}"

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            SESSION_CHILDREN.discard(self.process.pid)
            self.process = None


def stop_fsspec_io() -> None:
    """Stop fsspec's IO thread (s3fs starts it on first use and keeps it for the process).
    Why: a thread left in a test worker turns off the forking checksum for every later
    test there (forking a threaded process is unsafe), so tests of that path would fail
    by the order they ran in."""
    from loom_core.library.store import stop_io

    stop_io()
