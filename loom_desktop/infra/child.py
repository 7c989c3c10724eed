"""How the app starts its helper processes (checksum, proxy, demo agent), frozen or not.

Why: from a venv the app runs ``python -m loom_core …``; in a PyInstaller bundle
``sys.executable`` is the app itself, which has no ``-m``. The bundle's entry
point therefore understands ``--run-module MODULE ARGS…`` and runs that module as
``__main__`` in the child, so every helper command works the same in both.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence

RUN_MODULE = "--run-module"
BACKGROUND = "loom_core.cli.background"  # a loom_core command at a lower CPU priority


def module_command(module: str, *args: str) -> tuple[str, list[str]]:
    """(program, arguments) that run ``python -m module args`` in this installation."""
    if getattr(sys, "frozen", False):
        return sys.executable, [RUN_MODULE, module, *args]
    return sys.executable, ["-m", module, *args]


def run_module(argv: Sequence[str]) -> int:
    """Run ``argv[0]`` as ``__main__`` with ``argv[1:]`` as its arguments; its exit code."""
    module, *args = argv
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0
