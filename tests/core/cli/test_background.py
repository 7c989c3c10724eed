"""The desktop's background helpers (checksum check, library indexing) run at a lower CPU
priority, so a big run's scrubbing keeps the cores (issue 14)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from loom_core.cli.background import NICENESS

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"

_NICENESS_AFTER = (
    "from loom_core.cli.background import lower_priority; import os; "
    "lower_priority(); print(os.nice(0))"
)


@pytest.mark.skipif(not hasattr(os, "nice"), reason="no process priorities on this OS")
def test_a_background_process_lowers_its_own_priority() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _NICENESS_AFTER], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == min(19, os.nice(0) + NICENESS)


def test_a_command_run_in_the_background_answers_as_in_the_foreground() -> None:
    argv = ["checksum", str(SAMPLE)]
    background = subprocess.run(
        [sys.executable, "-m", "loom_core.cli.background", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    foreground = subprocess.run(
        [sys.executable, "-m", "loom_core", *argv], capture_output=True, text=True, timeout=60
    )
    assert background.returncode == foreground.returncode == 0, background.stderr
    assert background.stdout == foreground.stdout == "valid\n"


def test_bad_input_in_the_background_is_refused_like_in_the_foreground(tmp_path: Path) -> None:
    missing = tmp_path / "gone.loom.json"
    done = subprocess.run(
        [sys.executable, "-m", "loom_core.cli.background", "checksum", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and str(missing) in done.stderr
