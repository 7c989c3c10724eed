"""Started with a Python that lacks our dependencies, a command says how to run it: one line.

``python3 -m loom_core …`` in the checkout, outside the venv, used to print a 12-line
traceback ending in ``ModuleNotFoundError: msgspec``. ``-S`` gives the same situation here:
the interpreter without its site-packages, our packages found from the current folder.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from loom_core.cli import outside_venv

ROOT = Path(__file__).resolve().parents[3]


def run_without_site_packages(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-S", *args], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


@pytest.mark.parametrize(
    ("module", "args"),
    [("loom_core", ["summary", "resources/sample.loom.json"]), ("loom_desktop", [])],
)
def test_a_missing_dependency_is_one_line_with_the_command_that_works(
    module: str, args: list[str]
) -> None:
    done = run_without_site_packages("-m", module, *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and "does not have" in done.stderr
    assert f"python -m {module} {' '.join(args)}".rstrip() in done.stderr
    assert "venv" in done.stderr
    if module == "loom_desktop":
        assert "make run" in done.stderr


def test_the_hint_names_the_venv_or_how_to_make_it(tmp_path: Path) -> None:
    error = ModuleNotFoundError("No module named 'msgspec'", name="msgspec")
    line = outside_venv.hint(error, "loom_core", ["steps", "a b.json"], checkout=tmp_path)
    assert "create the project's venv with `make run`" in line
    assert line.endswith("-m loom_core steps 'a b.json'")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    line = outside_venv.hint(error, "loom_core", ["steps", "x"], checkout=tmp_path)
    assert "run it with the project's venv: " in line and "make run" not in line


def test_a_module_of_ours_that_is_missing_is_a_bug_not_a_hint() -> None:
    error = ModuleNotFoundError("No module named 'loom_core.gone'", name="loom_core.gone")
    with pytest.raises(ModuleNotFoundError):
        outside_venv.explain(error, "loom_core")
