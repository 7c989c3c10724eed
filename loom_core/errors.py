"""Errors that name the file and the cause, so every face can report them in one line."""

from __future__ import annotations

from pathlib import Path


class LoadError(Exception):
    """A file could not be read as a loom document.

    Carries the path and a human cause separately so the CLI can print
    ``PATH: cause`` and the GUI can show both in a dialog.
    """

    def __init__(self, path: str | Path, cause: str) -> None:
        self.path = str(path)
        self.cause = cause
        super().__init__(f"{self.path}: {cause}")
