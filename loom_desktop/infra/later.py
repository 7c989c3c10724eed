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

from PySide6.QtCore import QObject, QTimer


def call_later(msec: int, owner: QObject, method: Callable[[], object]) -> None:
    """Call ``method`` (a bound method of ``owner``) after ``msec`` ms, if ``owner`` lives."""
    ref = weakref.WeakMethod(method)

    def call() -> None:
        bound = ref()
        if bound is not None:
            bound()

    QTimer.singleShot(msec, owner, call)
