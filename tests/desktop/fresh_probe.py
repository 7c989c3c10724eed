"""Run a probe script in a fresh interpreter and read the JSON it printed last.

Why a fresh interpreter: what a start-up imports or reads is only visible in a process
that has imported nothing yet (the test session has imported everything)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def json_probe(script: str, *args: str) -> Any:
    """``script``'s last line of output as JSON, once it exited 0 (else its stderr fails
    the test); bounded at two minutes."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])
