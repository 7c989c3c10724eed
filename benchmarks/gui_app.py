"""The real app as the GUI benchmarks drive it: fresh settings, a run library of its own,
a 1400x860 window, one file."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import loom_desktop  # noqa: E402,F401  (pins pyqtgraph to PySide6)
from loom_desktop.__main__ import _import_core_first  # noqa: E402

_import_core_first()  # as the app's entry point does, before PySide6 (its start-up cost)

from loom_desktop.app import LoomApplication, quiet_qt_noise  # noqa: E402
from loom_desktop.infra.settings import DesktopSettings  # noqa: E402
from loom_desktop.main_window import MainWindow  # noqa: E402


def private_library() -> Path:
    """Point this process's run library at a new file of its own, deleted at exit. Why: the
    window lists every run it opens, so a benchmark's synthetic and temporary runs would
    land in the user's own library, and with ``LOOM_LIBRARY_URL`` set in their shell, in
    their team's database, published for everyone."""
    os.environ.pop("LOOM_LIBRARY_URL", None)
    folder = tempfile.mkdtemp(prefix="loom-bench-library-")
    atexit.register(shutil.rmtree, folder, True)
    path = Path(folder) / "library.sqlite3"
    os.environ["LOOM_DESKTOP_LIBRARY"] = str(path)
    return path


def open_in_app(path: str, library: bool = True) -> tuple[LoomApplication, MainWindow, Any]:
    """(application, window, the tab opening ``path`` in the background). ``library``
    False: the run library does not index the opened run (to measure its share)."""
    private_library()
    quiet_qt_noise()
    app = LoomApplication([])
    window = MainWindow(settings=DesktopSettings())  # never the user's settings
    if not library:
        window.library.loaded = lambda _path: None  # type: ignore[method-assign]
    window.resize(1400, 860)
    window.show()
    return app, window, window.open_path(path)
