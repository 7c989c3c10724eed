"""The application object: every request to open a file becomes one signal.

macOS delivers Finder opens as ``QFileOpenEvent`` (possibly before any window
exists); command-line paths and a second instance's paths (see
:mod:`.infra.single_instance`) join the same ``open_requested`` signal. Events that
arrive before someone listens are queued.

The application also carries the identity launchers match windows by: the
desktop file name (Wayland app id, KDE/GTK hints) and, on X11, the ``WM_CLASS``
instance name, both equal to the ``.desktop`` basename from
:mod:`.integration.description`, plus the window icon.
"""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QEvent, QtMsgType, Signal, qInstallMessageHandler
from PySide6.QtGui import QFileOpenEvent, QIcon
from PySide6.QtWidgets import QApplication, QWidget

from loom_core.formats import mapped_file
from loom_desktop import __version__
from loom_desktop.infra import gc_policy
from loom_desktop.infra.feature_scan import skip_source_reads
from loom_desktop.integration.description import APP, ICON_SIZES
from loom_desktop.resources import resources_dir

skip_source_reads()  # before the window's modules are imported (see feature_scan)

SWITCH_INTERVAL_S = 0.001
_NOISE = ("propagateSizeHints", "does not support raise()")  # offscreen platform chatter


def _qt_message(kind: QtMsgType, _context: object, message: str) -> None:
    if kind == QtMsgType.QtDebugMsg or any(n in message for n in _NOISE):
        return
    print(f"qt: {message}", file=sys.stderr)


def quiet_qt_noise() -> None:
    """Drop Qt's known-harmless platform chatter; pass everything else to stderr."""
    qInstallMessageHandler(_qt_message)


def app_icon() -> QIcon:
    """The application icon at every rendered size (PNGs: no SVG plugin needed when frozen)."""
    icon = QIcon()
    for size in ICON_SIZES:
        path = resources_dir() / "icons" / f"{APP.app_id}-{size}.png"
        if path.is_file():
            icon.addFile(str(path))
    return icon


def bring_to_front(window: QWidget) -> None:
    """Un-minimise, raise and activate ``window`` (the window manager may still refuse focus)."""
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()


class LoomApplication(QApplication):
    """QApplication with a single ``open_requested(path)`` entry point."""

    open_requested = Signal(str)
    raise_requested = Signal()  # a second launch wants the window in front

    def __init__(self, argv: list[str]) -> None:
        # X11 takes the WM_CLASS instance from argv[0] ("__main__.py" under python -m)
        # unless RESOURCE_NAME says otherwise; launchers match it to StartupWMClass.
        os.environ.setdefault("RESOURCE_NAME", APP.app_id)
        # Qt's raster engine hands every large fill (a scroll bar's groove, a widget's
        # background, the plot's bars) to a pool of helper threads and waits for them: each
        # step move woke them about 40 times, and on a busy two-core machine every wake is a
        # wait for a core, so a move took 1.3-1.5x its own CPU time end to end. Qt's own
        # switch (read when the pool is first asked for) keeps the fills on the GUI thread;
        # the pixels are the same. The price: the first paint, which fills the whole
        # window, is about 8% slower on two cores (issue 24 weighed it: a small run still
        # opens 40% faster than when the issue began, and every move is 4-5 ms faster).
        # Before the application exists. Qt asks only whether the variable is set (any
        # value, "0" too, keeps the fills here); a user's own value is left as it is.
        os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")
        # Background threads (the journal tailer, watchdog, workers) hand results to the
        # GUI thread through the interpreter lock; at the default 5 ms switch interval
        # each hand-off can wait that long behind a paint, several times per line.
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        super().__init__(argv)
        gc_policy.collect_on_gui_thread(self)  # never collect Qt objects on a worker thread
        # A big trace is mapped, not read, where a lease keeps it safe (loom_core's
        # mapped_file); SIGIO's disposition can only be set on this, the main, thread.
        mapped_file.enable()
        self.setApplicationName(APP.name)
        self.setApplicationVersion(__version__)
        self.setOrganizationName("loom-desktop")
        self.setDesktopFileName(APP.app_id)
        self.setWindowIcon(app_icon())
        self._pending: list[str] = []
        self._listening = False

    def start_listening(self) -> None:
        """Deliver queued open requests, then deliver new ones as they come."""
        self._listening = True
        pending, self._pending = self._pending, []
        for path in pending:
            self.open_requested.emit(path)

    def accept_handover(self, paths: list[str], activation_token: str | None = None) -> None:
        """Another launch's files: open each like a command-line path, then come to the front."""
        if activation_token:  # Wayland lets the window take focus with the launcher's token
            os.environ["XDG_ACTIVATION_TOKEN"] = activation_token
        for path in paths:
            self.request_open(path)
        self.raise_requested.emit()

    def request_open(self, path: str) -> None:
        if self._listening:
            self.open_requested.emit(path)
        else:
            self._pending.append(path)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FileOpen and isinstance(event, QFileOpenEvent):
            self.request_open(event.file())
            return True
        return super().event(event)
