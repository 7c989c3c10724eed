"""The plot's modules are imported off the GUI thread (issue 14: no event-loop stall while a
big run loads), then the plot is built on the GUI thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject

from loom_desktop.infra.background_import import BackgroundImport

_FRESH_WINDOW = """
import importlib.abc, json, sys, threading, time
importers = []

class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "pyqtgraph":
            importers.append(threading.current_thread().name)
        return None

sys.meta_path.insert(0, Spy())
from benchmarks.gui_app import open_in_app
app, window, view = open_in_app(sys.argv[1])
deadline = time.monotonic() + 60
while view.timeline_widget is None and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.005)
print(json.dumps({"built": view.timeline_widget is not None, "importers": importers}))
window.close()
"""

_QT_WARNINGS_FATAL = """
import threading
from PySide6.QtWidgets import QApplication
from loom_desktop.infra.background_import import PLOT_MODULES
import importlib
app = QApplication([])
thread = threading.Thread(target=lambda: [importlib.import_module(m) for m in PLOT_MODULES])
thread.start()
thread.join(60)
from loom_desktop.widgets.timeline import TimelineWidget
TimelineWidget().deleteLater()
print("ok")
"""


def _env(tmp_path: Path) -> dict[str, str]:
    root = Path(__file__).resolve().parents[3]
    return {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(root),
        "LOOM_DESKTOP_LIBRARY": str(tmp_path / "library.sqlite3"),
        "LOOM_DESKTOP_CONFIG_DIR": str(tmp_path / "config"),
    }


def _fresh(script: str, tmp_path: Path, *args: str, **env: str) -> str:
    """Run ``script`` in a fresh interpreter (nothing of Qt or the plot imported yet); its
    output, once it exited 0."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env={**_env(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_fresh_window_imports_the_plot_library_on_its_own_thread(
    tmp_path: Path, sample: Path
) -> None:
    result = json.loads(_fresh(_FRESH_WINDOW, tmp_path, str(sample)).splitlines()[-1])
    assert result["built"]
    assert result["importers"] == ["plot-import"]  # never the GUI thread


def test_the_plot_modules_import_off_the_gui_thread_without_a_qt_warning(tmp_path: Path) -> None:
    out = _fresh(_QT_WARNINGS_FATAL, tmp_path, QT_FATAL_WARNINGS="1")
    assert out.strip().endswith("ok")


class _Owner(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.calls: list[str] = []

    def ready(self) -> None:
        self.calls.append(threading.current_thread().name)


def test_waiting_methods_run_once_on_the_gui_thread_even_when_an_import_fails(qtbot) -> None:
    importer = BackgroundImport(("json", "no_such_module_for_loom_tests"))
    first, second = _Owner(), _Owner()
    importer.when_imported(first.ready)
    importer.when_imported(second.ready)
    qtbot.waitUntil(lambda: bool(first.calls and second.calls), timeout=10_000)
    late = _Owner()
    importer.when_imported(late.ready)  # after the import: still later, on the GUI thread
    qtbot.waitUntil(lambda: bool(late.calls), timeout=10_000)
    qtbot.wait(20)
    main = threading.main_thread().name
    assert first.calls == second.calls == late.calls == [main]


def test_an_owner_whose_qt_object_is_gone_is_not_called(qtbot) -> None:
    """Its window deleted (Qt deletes the children) while Python still holds the wrapper,
    as a closed window's seat of the run library is: no call, and no error in the event
    loop (the timer could not be given a deleted owner)."""
    importer = BackgroundImport(("json",))
    parent = QObject()
    owner = _Owner(parent)
    importer.when_imported(owner.ready)
    shiboken6.delete(parent)  # the child's Qt object goes with it
    qtbot.waitUntil(lambda: importer.done, timeout=10_000)
    qtbot.wait(20)
    assert owner.calls == []


def test_a_method_whose_owner_is_gone_is_not_called(qtbot) -> None:
    importer = BackgroundImport(("json",))
    calls: list[str] = []

    class Gone(QObject):
        def ready(self) -> None:
            calls.append("called")

    gone = Gone()
    importer.when_imported(gone.ready)
    del gone  # the tab was closed before the import ended
    qtbot.waitUntil(lambda: importer.done, timeout=10_000)
    qtbot.wait(20)
    assert calls == []


_TYPES_AT_THREAD_START = """
import json, threading
from PySide6.QtWidgets import QApplication
from loom_desktop.infra.background_import import QT_MODULES, BackgroundImport, qt_names
app = QApplication([])
seen = {}

class Spy(BackgroundImport):
    def _run(self):  # what the import thread finds when it starts
        unmade = [f"{m.__name__}.{n}" for m, n in qt_names(QT_MODULES) if n not in vars(m)]
        seen["unmade"] = unmade[:5]
        seen["count"] = len(unmade)
        super()._run()

import shiboken6
from PySide6.QtCore import QObject
class Waiter(QObject):
    def ready(self):
        app.quit()

waiter, importer = Waiter(), Spy(("json",))
importer.when_imported(waiter.ready)
app.exec()
print(json.dumps(seen))
"""


def test_qt_types_are_made_on_the_gui_thread_before_the_import_thread_starts(
    tmp_path: Path,
) -> None:
    """PySide6 makes types lazily and not safely on two threads: pyqtgraph's import on its
    thread walks every Qt name, and the window died when it met a new type meanwhile."""
    seen = json.loads(_fresh(_TYPES_AT_THREAD_START, tmp_path).splitlines()[-1])
    assert seen["count"] == 0, seen["unmade"]
