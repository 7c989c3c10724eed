"""The README's commands work as written for someone who just ran ``make run``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from loom_core.cli.entry import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"
_COMMAND = re.compile(r"python -m loom_core (\w[\w-]*)")


def test_readme_says_where_the_commands_run_before_the_first_one() -> None:
    text = README.read_text(encoding="utf-8")
    first = min(
        m.start()
        for m in re.finditer(r"```sh\n(.*?)```", text, re.DOTALL)
        if "python -m loom_core" in m.group(1)
    )
    before = text[:first]
    assert ". .venv/bin/activate" in before and ".venv/bin/python -m loom_core" in before


def test_every_readme_command_exists_and_runs_through_the_venv_python() -> None:
    text = README.read_text(encoding="utf-8")
    named = set(_COMMAND.findall(text))
    parser = build_parser()
    known = next(a for a in parser._actions if a.dest == "command").choices  # type: ignore[union-attr]
    assert named and named <= set(known), named - set(known)
    example = re.search(r"`(\.venv/bin/python -m loom_core summary [^`]+)`", text)
    assert example is not None
    args = example.group(1).split()[3:]  # what follows "python -m loom_core"
    done = subprocess.run(
        [sys.executable, "-m", "loom_core", *args],
        capture_output=True,
        text=True,
        cwd=README.parent,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
