"""The one line a command started outside the project's venv prints instead of a traceback.

``python3 -m loom_core …`` in the checkout, with the shell's own Python, finds our packages
(they are in the current folder) but none of their dependencies, and used to end in a
12-line traceback about ``msgspec``. What the user needs is the command that works: the same
one through the venv's Python, or ``make run`` when there is no venv yet. Only the standard
library is imported here, since that is all such a Python has.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

EXIT_BAD_INPUT = 2
OURS = ("loom_core", "loom_desktop")
CHECKOUT = Path(__file__).resolve().parents[2]


def is_missing_dependency(error: ModuleNotFoundError, checkout: Path = CHECKOUT) -> bool:
    """A third-party module is missing and this is not the project's venv (a module of ours,
    or one the venv lacks, is a bug whose traceback is the report)."""
    top = (error.name or "").split(".", 1)[0]
    in_venv = Path(sys.prefix).resolve() == (checkout / ".venv").resolve()
    return bool(top) and top not in OURS and not in_venv


def venv_python(checkout: Path = CHECKOUT) -> Path:
    if sys.platform == "win32":
        return checkout / ".venv" / "Scripts" / "python.exe"
    return checkout / ".venv" / "bin" / "python"


def _shown(path: Path) -> str:
    """``path`` as the user would type it from here: relative inside the current folder."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def hint(
    error: ModuleNotFoundError, module: str, argv: Sequence[str], checkout: Path = CHECKOUT
) -> str:
    """One line: what is missing, and the command that runs ``module argv`` as it should."""
    python = venv_python(checkout)
    command = shlex.join([_shown(python), "-m", module, *argv])
    head = f"{module}: this Python ({sys.executable}) does not have {error.name}, which it needs"
    if module == "loom_desktop":
        command += " (or: make run)"
    if python.exists():
        return f"{head}; run it with the project's venv: {command}"
    return (
        f"{head}; create the project's venv with `make run` in {_shown(checkout)}, then: {command}"
    )


def message(error: ModuleNotFoundError, module: str) -> str | None:
    """The hint for a missing dependency, or None for any other missing module."""
    return hint(error, module, sys.argv[1:]) if is_missing_dependency(error) else None


def explain(error: ModuleNotFoundError, module: str) -> int:
    """Print the hint for a missing dependency and return the exit code; re-raise anything
    else (a module of ours that is missing is a bug, and its traceback is the report)."""
    line = message(error, module)
    if line is None:
        raise error
    print(line, file=sys.stderr)
    return EXIT_BAD_INPUT
