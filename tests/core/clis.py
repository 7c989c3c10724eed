"""Run the two command lines under test as subprocesses, as a user would.

Why subprocesses: the contracts are about exit codes, stdout and stderr of the
real entry points (``python -m loom_core`` and loom-harness's ``loom`` script),
including "no traceback", which an in-process call could mask.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LOOM = Path(sys.executable).with_name("loom")
ROOT = Path(__file__).resolve().parents[2]


def core(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m loom_core ARGS`` from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "loom_core", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def loom(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """loom-harness's own ``loom ARGS`` console script (the reference reader)."""
    return subprocess.run(
        [str(LOOM), *map(str, args)], capture_output=True, text=True, encoding="utf-8", timeout=120
    )
