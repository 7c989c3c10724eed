"""Where the run library sits in the window before it is built: it is built once the run
the app opened at start has painted its plot, not with the window.

Why: the library's part of the window (:class:`~.window_ui.LibraryUi`: its controller, the
Runs page and the Runs dock's page, and the library's thirty-odd modules) took about 40 ms
of the GUI thread before a run's first rows on the quiet machine, and twice that when
loaded, on every start that opens a file, where nothing of it shows until the user asks.
Until it is built, the window's calls that only tell it something (a run loaded, a live
tab followed) wait here, in order, and the menu entries that open it are stand-ins that
build it first. Anything that needs it (the start page with no run open, View ▸ Runs,
Settings ▸ Library…, a feature reading :attr:`ui`) builds it at once.

After the plot its modules are imported on a thread of their own
(:class:`~loom_desktop.infra.background_import.BackgroundImport`), then it is built on
the GUI thread (pages, dock and controller: about 10 ms): imported there in the turn the
plot showed, they made that turn the load's longest stall (81-98 ms against 38-62).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMenu, QWidget

from loom_desktop.infra.background_import import BackgroundImport

if TYPE_CHECKING:
    from loom_desktop.features.library.window_ui import LibraryUi

LATEST_MS = 10_000  # built by then even if the run opened at start never showed its plot
RUNS_KEY = "Ctrl+Shift+R"
MODULES = ("loom_desktop.features.library.window_ui",)  # and through it the library's


class LibrarySeat(QObject):
    """Builds the window's :class:`LibraryUi` when it is first needed (see the module)."""

    def __init__(self, window: Any, hint: QLabel, view_menu: QMenu) -> None:
        super().__init__(window)
        self._window = window
        self._importer: BackgroundImport | None = None
        self._hint = hint
        self._menu = view_menu
        self._ui: LibraryUi | None = None
        self._closed = False  # the window closed: nothing is built or started any more
        self._waiting: list[Callable[[LibraryUi], object]] = []
        self._runs = QAction("&Runs", window, checkable=True)  # the dock's toggle, until built
        self._runs.setShortcut(RUNS_KEY)
        self._runs.triggered.connect(lambda _on: self.ui.dock.show())
        view_menu.addAction(self._runs)
        window.addAction(self._runs)

    def install_settings(self, menu: QMenu) -> None:
        """Settings ▸ Library…: this computer's library or a team's."""
        menu.addAction("&Library…").triggered.connect(lambda _c=False: self.ui.settings_dialog())

    @property
    def built(self) -> bool:
        return self._ui is not None

    @property
    def ui(self) -> LibraryUi:
        """The library's part of the window, built now if it was not yet."""
        if self._ui is None:
            self._build()
        assert self._ui is not None
        return self._ui

    def start_page(self) -> QWidget | None:
        """What the window shows with no tab open: the Runs page (built now if needed);
        None once the window has closed without it."""
        return None if self._closed and self._ui is None else self.ui.start_page

    def tell(self, call: Callable[[LibraryUi], object]) -> None:
        """Tell the library something: now if it is built, else once it is."""
        if self._ui is not None:
            call(self._ui)
        else:
            self._waiting.append(call)

    def start_after_first_paint(self) -> None:
        """Build the library (if nothing has yet) and start it once the run opening at
        start has shown its plot (its first paint, not its placing); at once when no run
        is opening (the start page is what shows) or the window is not on screen (nothing
        paints there).

        Why wait: started at once, the watcher's import on this thread, its threads, the
        first query and the indexing of the opened run took the interpreter lock and the
        cores from that run's first screen and its plot's build: what the user waits for.
        A tab that fails, closes or is switched from, or a window never painted
        (:data:`LATEST_MS`), starts it too: the library is never left unstarted."""
        view = self._window.current()
        if view is None or not self._window.isVisible():
            self._start()
            return
        if view.plot_is_shown:
            self._import_then_start()
            return
        start = self._import_then_start
        view.plot_shown.connect(start)
        view.failed.connect(lambda _exc: start())
        view.destroyed.connect(lambda _obj=None: start())
        self._window.tabs.currentChanged.connect(lambda _i: start())
        QTimer.singleShot(LATEST_MS, self, start)

    def shutdown(self) -> None:
        """The window closes: a library never built has nothing to stop."""
        self._closed = True
        self._waiting.clear()
        if self._ui is not None:
            self._ui.shutdown()

    def _import_then_start(self) -> None:
        """Import the library's modules on their thread, then build and start it."""
        if self._importer is None:
            self._importer = BackgroundImport(MODULES)
        self._importer.when_imported(self._start)

    def _start(self) -> None:
        if not self._closed:
            self.ui.start()

    def _build(self) -> None:
        if self._ui is not None:
            return
        from loom_desktop.features.library.window_ui import LibraryUi

        window = self._window
        self._ui = ui = LibraryUi(window, self._hint, self._menu, self._runs)
        self._menu.removeAction(self._runs)
        window.removeAction(self._runs)
        self._runs.setShortcut(QKeySequence())  # (gone at the next turn: its key is free now)
        self._runs.deleteLater()
        window.central.addWidget(ui.start_page)
        ui.install_dock()
        waiting, self._waiting = self._waiting, []
        for call in waiting:
            call(ui)
        window.library_built()
