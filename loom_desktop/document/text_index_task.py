"""The run's trigram text index, built (or mapped from the last open) after the first paint.

Why after it and in a worker: building reads every step's text once (about a second per
100,000 effects of CPU); nothing on screen needs it, only the next text filter, which
scans the whole text without it. The build pauses between its chunks while the user moves
through a run (:mod:`loom_desktop.infra.activity`): it would take the interpreter lock
from the GUI thread's step moves. Kept beside the run library's database
(``text-index/`` next to it), so a run opened again maps its index instead of building
it (see :mod:`loom_core.views.text_index`). A live run grows: it is never indexed.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject

from loom_core.library.db import library_path
from loom_core.views import text_index
from loom_core.views.timeline import Timeline
from loom_desktop.infra.activity import USER
from loom_desktop.infra.workers import Task, TaskContext


def index_folder() -> str:
    """Where the indexes are kept: beside the run library's database."""
    return os.path.join(os.path.dirname(library_path()), "text-index")


class TextIndexer(QObject):
    """Owns the worker that builds or maps one tab's index; cancelled with the tab."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.task = Task(self)
        self.task.failed.connect(lambda _exc: None)  # a cache: the filter scans without it

    def start(self, tl: Timeline) -> None:
        """Index ``tl`` (a loaded run that no longer grows) in the background."""
        folder = index_folder()
        self.task.start(lambda ctx: _ensure(tl, folder, ctx))

    def cancel(self) -> None:
        self.task.cancel()


def _ensure(tl: Timeline, folder: str, ctx: TaskContext) -> object:
    return text_index.ensure(tl, folder, lambda: USER.wait_quiet(ctx.cancelled))
