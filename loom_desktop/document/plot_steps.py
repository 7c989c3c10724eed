"""Run a piece of GUI-thread work a step per event-loop turn, or the rest of it at once.

Why: a tab's plot, built and fed in one go, froze the window 40-170 ms at 100,000 effects
(pyqtgraph's items, its menus, fonts and pictures made cold, then 100,000 steps' arrays);
the step list and the keyboard must answer within a frame or three meanwhile. A generator
says where the work may pause; :class:`Steps` runs one step per turn of the event loop, so
the events that came meanwhile (a key, a repaint, the stall probe's tick) are served between
steps. A step that yields a number of milliseconds is followed that much later (the work
waits for a worker: polled at every turn, the GUI thread would spin and take the
interpreter lock from it). Its timer is a child of the owner: a tab closed halfway drops
the rest with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, QTimer


class Steps(QObject):
    """Drives ``steps`` one per event-loop turn; ``done`` is called after the last."""

    def __init__(
        self, owner: QObject, steps: Iterator[int | None], done: Callable[[], object]
    ) -> None:
        super().__init__(owner)
        self._steps: Iterator[int | None] | None = steps
        self.hurried = False  # finish() runs the rest now: a step must not wait
        self._done = done
        self._timer = QTimer(self, interval=0)
        self._timer.timeout.connect(self._next)
        self._timer.start()

    @property
    def running(self) -> bool:
        return self._steps is not None

    def _next(self) -> None:
        if self._steps is None:
            return
        try:
            self._timer.setInterval(next(self._steps) or 0)
        except StopIteration:
            self._end()
        except BaseException:
            self._steps = None
            self._timer.stop()
            raise

    def finish(self) -> None:
        """Run every step left now (a caller that needs the result in this slot)."""
        if self._steps is None:
            return
        self.hurried = True
        for _ in self._steps:
            pass
        self._end()

    def _end(self) -> None:
        self._steps = None
        self._timer.stop()
        self._done()
