"""Call a widget's method a little later, unless the widget is gone by then.

PySide ties ``QTimer.singleShot(ms, obj.method)`` to ``obj`` only when ``method`` is a plain
method; a wrapped one (a decorator, or the window fuzzer's wrapper) or a lambda is called
even after ``obj`` was deleted: a tab closed within those milliseconds got its deferred plot
built on a splitter Qt had already deleted (RuntimeError, found by the window fuzzer).
Here the owner is the timer's context, so the call is dropped with it, and the method is
held weakly: PySide keeps the callable as long as the timer lives, and a closed tab must
not stay in memory through it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid


def call_later(msec: int, owner: QObject, method: Callable[[], object]) -> None:
    """Call ``method`` (a bound method of ``owner``) after ``msec`` ms, if ``owner`` lives.
    An owner whose Qt object is gone already (its window was deleted while Python still
    holds the wrapper) gets no call: Qt cannot time one for it."""
    if not isValid(owner):
        return
    ref = weakref.WeakMethod(method)

    def call() -> None:
        bound = ref()
        if bound is not None:
            bound()

    QTimer.singleShot(msec, owner, call)


def soon(method: Callable[[], object]) -> None:
    """Call ``method`` (a bound method of a QObject) at the event loop's next turn, if its
    object still lives then."""
    call_later(0, method.__self__, method)  # type: ignore[attr-defined]


class AfterPaint(QObject):
    """Calls ``method`` (a bound method of a QObject) once, after ``widget``'s next paint:
    work that may wait until the user sees something (a tab's plot: pyqtgraph's import and
    the plot's build took 0.3-0.6 s, and a fixed 30 ms delay often fired before the step
    list had painted its rows). Held weakly, and dropped with its owner (see call_later)."""

    def __init__(self, widget: QWidget, method: Callable[[], object]) -> None:
        super().__init__(widget)
        self._method: weakref.WeakMethod[Callable[[], object]] | None = weakref.WeakMethod(method)
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint and self._method is not None:
            watched.removeEventFilter(self)
            bound, self._method = self._method(), None
            if bound is not None:  # after this paint is on the screen
                soon(bound)
        return False
