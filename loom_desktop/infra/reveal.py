"""Reveal in Folder: show a run's folder in the platform's file manager, or say why not.

Why not just ``QDesktopServices.openUrl``: on Linux Qt hands the folder to ``xdg-open`` and
reports success once that started, so on a desktop with no file manager (no application
set for ``inode/directory``) nothing opened and nothing was said. Whether a folder can be
opened is asked first, off the GUI thread (``xdg-mime`` is a shell script); when it
cannot, a dialog says so and gives the folder's path to copy.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox, QWidget

from loom_desktop.infra.workers import Task

QUERY_TIMEOUT_S = 5.0


def why_no_file_manager() -> str | None:
    """Why this machine cannot show a folder (None: it can, as far as one can tell)."""
    if not sys.platform.startswith("linux"):
        return None  # macOS and Windows always have one; openUrl says if it failed
    if shutil.which("xdg-open") is None:
        return "xdg-open is not installed (Debian/Ubuntu: the xdg-utils package)"
    try:
        done = subprocess.run(
            ["xdg-mime", "query", "default", "inode/directory"],
            capture_output=True,
            text=True,
            timeout=QUERY_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None  # cannot tell: let xdg-open try
    if not done.stdout.strip():
        return "no application is set to open folders (no file manager for inode/directory)"
    return None


class Revealer:
    """Reveals folders for ``parent`` (a widget that owns the check's worker)."""

    def __init__(self, parent: QWidget) -> None:
        self.parent = parent
        self.told: list[str] = []  # what the user was told (tests read it)
        self._folder = ""
        self._task = Task(parent)
        self._task.finished.connect(self._checked)
        self._task.failed.connect(lambda _exc: self._open(self._folder))

    def reveal(self, path: str) -> None:
        """Show the folder holding ``path`` (checked in the background first)."""
        self._folder = str(Path(path).parent)
        self._task.start(lambda _ctx: why_no_file_manager())

    def _checked(self, why: str | None) -> None:
        if why is None:
            self._open(self._folder)
        else:
            self._tell(self._folder, why)

    def _open(self, folder: str) -> None:
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(folder)):
            self._tell(folder, "the system could not open it")

    def _tell(self, folder: str, why: str) -> None:
        text = f"Cannot show the folder in a file manager: {why}.\n\nThe run is in:\n{folder}"
        self.told.append(text)
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "Reveal in Folder",
            text,
            QMessageBox.StandardButton.Ok,
            self.parent,
        )
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
