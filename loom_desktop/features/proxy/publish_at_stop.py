"""Proxy ▸ Start…'s "publish when it stops": the finished trace goes to the team library.

Why the app publishes, not the proxy (the CLI's ``proxy --publish`` publishes in the
proxy): Stop waits for the proxy to finish its trace on the window's thread, and an
upload must not freeze the window nor be killed by Stop's time limit; and the library
the window uses may be one chosen in Settings, which the proxy's environment does not
name. So the proxy only records, as without publishing, and once it has stopped its
trace is published from a pool thread by the same code as ``--publish``
(:func:`~loom_core.library.publish_done.publish_finished`). A failure is one line to the
user, saying how to publish it later; the recording stays where it is, as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from loom_desktop.infra.thread_runner import failure_cause
from loom_desktop.infra.workers import Task

NOT_PUBLISHED = ": not published ("  # how publish_finished words a failure
PUBLISHED = ": published to "  # and a success


def publish_trace(save: str, library: str) -> list[str]:
    """Publish the trace at ``save`` to ``library`` (a pool thread); one line per file."""
    from loom_core.library.publish_done import publish_finished
    from loom_core.library.store import store_io

    with store_io():  # no fsspec thread outlives the upload (see store_io)
        return publish_finished([save], library)


class StopPublisher(QObject):
    """Publishes the traces of proxies that stopped; ``done(lines)`` after each."""

    done = Signal(list)

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self._tasks: set[Task] = set()  # one per trace being published, until it answers

    def publish(self, save: str, library: str) -> None:
        """Publish the trace a proxy recorded at ``save`` (one that recorded no exchange
        wrote none: nothing to publish, and the status line says so)."""
        name = Path(save).name
        if not Path(save).is_file():
            self.window.show_status(f"{name}: nothing to publish (no exchange recorded)", 10_000)
            return
        task = Task(self)
        self._tasks.add(task)
        task.finished.connect(lambda lines, t=task: self._answer(t, list(lines)))
        task.failed.connect(
            lambda exc, t=task: self._answer(t, [f"{save}{NOT_PUBLISHED}{failure_cause(exc)})"])
        )
        self.window.show_status(f"publishing {name} to the team library…", 10_000)
        task.start(lambda _ctx: publish_trace(save, library))

    def _answer(self, task: Task, lines: list[str]) -> None:
        self._tasks.discard(task)
        for line in lines:
            if NOT_PUBLISHED in line:
                self.window.report_error("Not published", line)
            else:  # what happened first: the status bar elides a long line in its middle
                path, _, where = line.partition(PUBLISHED)
                self.window.show_status(
                    f"published {Path(path).name} to the team library: {where}", 15_000
                )
        self.window.library.controller.refresh()  # the run is listed as published
        self.done.emit(lines)

    @property
    def busy(self) -> bool:
        return bool(self._tasks)
