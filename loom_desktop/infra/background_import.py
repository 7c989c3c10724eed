"""Import the plot's modules on a thread of their own, then build the plot on the GUI thread.

Why: pyqtgraph and our timeline widget are about 400 modules and 0.4-0.6 s of import
(PySide's import hook also reads the source of each one). Imported on the GUI thread
right after a big run's first rows were painted, that import was the longest freeze of
the whole load: 1.1-1.5 s at 100,000 effects, since the loader's thread held the
interpreter lock half of that time. On a thread of its own the import shares the lock
with the window, which answers meanwhile; a big run's tab starts it only once the whole
run is loaded (while the loader also ran, three threads wanting the lock still froze the
window 0.1-0.4 s at 100,000 effects). The import itself is safe off the GUI thread: these
modules make no widget, pixmap or timer when imported (a test imports them so with Qt's
warnings fatal).
"""

from __future__ import annotations

import importlib
import threading
import weakref
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal

from loom_desktop.infra.later import soon

PLOT_MODULES = ("pyqtgraph", "loom_desktop.widgets.timeline")


class BackgroundImport(QObject):
    """Imports ``modules`` once, on a thread; each waiting method is called on the GUI
    thread when that is done (whether it worked or not: the method's own import then
    names any failure where it is shown). Methods are held weakly, as in :mod:`.later`."""

    _finished = Signal()

    def __init__(self, modules: tuple[str, ...]) -> None:
        super().__init__()
        self.modules = modules
        self.done = False
        self._thread: threading.Thread | None = None
        self._waiting: list[weakref.WeakMethod[Callable[[], object]]] = []
        self._finished.connect(self._call_waiting, Qt.ConnectionType.QueuedConnection)

    def when_imported(self, method: Callable[[], object]) -> None:
        """Call ``method`` (a bound method of a QObject) once the modules are imported."""
        if self.done:
            soon(method)
            return
        self._waiting.append(weakref.WeakMethod(method))
        if self._thread is None:
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
