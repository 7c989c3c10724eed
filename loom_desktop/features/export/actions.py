"""File ▸ Export ▸ Self-contained HTML…: the current run as one page anyone can open offline.

The user picks where the page goes (a save dialog; nothing is written anywhere else); the
page is built and written in a worker, since a big run takes seconds; the status bar says
where it went, a failure is an error dialog naming the file and the cause.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMenu

from loom_core.export.html import write_page
from loom_desktop.infra.services import WindowServices
from loom_desktop.infra.workers import Task

PAGE_FILTER = "HTML pages (*.html);;All files (*)"


class ExportActions(QObject):
    """Owns the Export menu's actions and the one export task running at a time."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.services: WindowServices = window
        self.task = Task(self)
        self.task.finished.connect(self._done)
        self.task.failed.connect(self._failed)
        self._target = ""

    def install(self, file_menu: QMenu) -> QMenu:
        menu = file_menu.addMenu("&Export")
        menu.addAction("Self-contained &HTML…").triggered.connect(lambda _c=False: self.ask())
        menu.addAction("Self-contained HTML, Secrets &Scrubbed…").triggered.connect(
            lambda _c=False: self.ask(scrub=True)
        )
        return menu

    def ask(self, scrub: bool = False) -> None:
        """Ask where to write the current run's page, then write it in the background."""
        view = self.window.current()
        if view is None or view.doc is None or not view.complete:
            self.services.show_status("Export: open a run and wait until it is loaded.", 8000)
            return
        suggested = str(Path.home() / (Path(view.path).name.split(".")[0] + ".html"))
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Export run as HTML", suggested, PAGE_FILTER
        )
        if path:
            self.export(view.doc, view.session.timeline, path, scrub)

    def export(self, doc: Any, timeline: Any, path: str, scrub: bool = False) -> None:
        """Write ``doc``'s page to ``path`` off the GUI thread (``finished``/``failed`` follow)."""
        self._target = path
        self.services.show_status(f"Exporting {Path(path).name}…", 0)
        self.task.start(lambda _ctx: write_page(doc, path, timeline, scrub))

    def _done(self, size: object) -> None:
        self.services.show_status(f"Exported {self._target} ({size:,} bytes)", 15_000)

    def _failed(self, exc: object) -> None:
        cause = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        self.services.show_status("", 1)
        self.services.report_error("Export failed", f"Could not write {self._target}: {cause}")
