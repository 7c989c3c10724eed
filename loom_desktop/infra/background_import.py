"""Import the plot's modules on a thread of their own, then build the plot on the GUI thread.

Why: pyqtgraph and our timeline widget are about 400 modules and 0.4-0.6 s of import
(PySide's import hook also reads the source of each one). Imported on the GUI thread
right after a big run's first rows were painted, that import was the longest freeze of
the whole load: 1.1-1.5 s at 100,000 effects, since the loader's thread held the
interpreter lock half of that time. On a thread of its own the import shares the lock
with the window, which answers meanwhile; a big run's tab starts it only once the whole
run is loaded (while the loader also ran, three threads wanting the lock still froze the
window 0.1-0.4 s at 100,000 effects). These modules make no widget, pixmap or timer when
imported (a test imports them so with Qt's warnings fatal).

Why Qt's types are made on the GUI thread first: PySide6 makes a module's Python types on
first use (lazily), and making them is not safe on two threads at once. pyqtgraph's import
touches every name of QtCore, QtGui and QtWidgets; on its thread, while the window met a
type for the first time, the process died: a segmentation fault in that import, in a
Runs-page test that opens the first run of its process (once in 40 runs). So every name
of the Qt modules the plot uses is looked up on the GUI thread first, a few milliseconds
per event-loop turn (:data:`SLICE_S`), and only then does the thread start: it then
makes none of them.
"""

from __future__ import annotations

import importlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from types import ModuleType

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from loom_desktop.infra import gc_policy
from loom_desktop.infra.later import soon

# numpy.ma: numpy imports it lazily the first time the plot's legend or bars ask np.unique
# (40-110 ms on the GUI thread, inside the plot's first feed)
PLOT_MODULES = ("pyqtgraph", "loom_desktop.widgets.timeline", "numpy.ma")
# the Qt modules pyqtgraph's import looks through (pyqtgraph/Qt/__init__.py)
QT_MODULES = ("QtCore", "QtGui", "QtWidgets", "QtSvg", "QtOpenGLWidgets", "QtTest")
SLICE_S = 0.005  # GUI-thread time per event-loop turn spent making Qt's types


def qt_names(modules: tuple[str, ...] = QT_MODULES) -> Iterator[tuple[ModuleType, str]]:
    """(module, name) of every name of ``modules`` (those PySide6 has), for making their
    types on the GUI thread (see the module docstring)."""
    for name in modules:
        try:
            module = importlib.import_module(f"PySide6.{name}")
        except ImportError:
            continue
        for attr in dir(module):
            yield module, attr


class BackgroundImport(QObject):
    """Imports ``modules`` once, on a thread; each waiting method is called on the GUI
    thread when that is done (whether it worked or not: the method's own import then
    names any failure where it is shown). Methods are held weakly, as in :mod:`.later`."""

    _finished = Signal()

    def __init__(self, modules: tuple[str, ...], qt_modules: tuple[str, ...] = QT_MODULES) -> None:
        super().__init__()
        self.modules = modules
        self.done = False
        self._thread: threading.Thread | None = None
        self._waiting: list[weakref.WeakMethod[Callable[[], object]]] = []
        self._finished.connect(self._call_waiting, Qt.ConnectionType.QueuedConnection)
        self._names = qt_names(qt_modules)
        self._making = QTimer(self, interval=0)  # Qt's types, a slice per event-loop turn
        self._making.timeout.connect(self._make_types)

    def when_imported(self, method: Callable[[], object]) -> None:
        """Call ``method`` (a bound method of a QObject) once the modules are imported."""
        if self.done:
            soon(method)
            return
        self._waiting.append(weakref.WeakMethod(method))
        if self._thread is None and not self._making.isActive():
            self._making.start()

    def _make_types(self) -> None:
        """Look up the next slice of Qt's names; when all are made, start the import."""
        deadline = time.perf_counter() + SLICE_S
        for module, name in self._names:
            getattr(module, name, None)  # makes the type now, on the GUI thread
            if time.perf_counter() >= deadline:
                return
        self._making.stop()
        # Not a daemon: the interpreter waits for it at exit (under a second) instead
        # of stopping it halfway through an import.
        self._thread = threading.Thread(target=self._run, name="plot-import")
        self._thread.start()

    def _run(self) -> None:
        try:
            for name in self.modules:
                importlib.import_module(name)
        except Exception:  # noqa: BLE001,S110 - the GUI thread's own import reports it
            pass
        try:
            self._finished.emit()
        except RuntimeError:  # the application (and this object) is already gone
            pass

    def _call_waiting(self) -> None:
        self.done = True
        gc_policy.keep_imported()
        waiting, self._waiting = self._waiting, []
        for ref in waiting:
            bound = ref()
            if bound is not None:
                soon(bound)


_plot: BackgroundImport | None = None


def plot_modules() -> BackgroundImport:
    """The process's one importer of the plot's modules (made on the GUI thread)."""
    global _plot
    if _plot is None:
        _plot = BackgroundImport(PLOT_MODULES)
    return _plot
