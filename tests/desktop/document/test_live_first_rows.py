"""What a live tab's rows would wait for on the GUI thread is done before they come.

The cyclic collector is kept off what lived before the tab, as a loaded tab does: the
collections run on the GUI thread (``gc_policy``), and with nothing frozen each full one
walked every object of the process (the window, the plot, their modules) while the rows of
a fast tail waited for it. And numpy's lazily imported ``numpy.ma`` (asked by ``np.unique``)
comes with the plot's import, not inside its first paint. Checked by what is frozen and
what is imported, never by a time.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent

from loom_desktop.infra import gc_policy
from loom_desktop.main_window import MainWindow
from tests.core.live_helpers import effect, header, model_result


def test_a_live_tab_freezes_until_it_closes(qtbot, window: MainWindow, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + effect(0, "model", model_result("hi")))
    held = gc_policy.frozen_runs()
    view = window.open_path(str(path))
    assert view.live is not None
    assert gc_policy.frozen_runs() == held + 1
    assert gc.get_freeze_count() > 0  # the window and the plot are out of the collector's walk
    model = view.model
    qtbot.waitUntil(lambda: model.rowCount() > 1, timeout=10_000)  # still followed
    holding = gc_policy.frozen_runs()  # (earlier tests' tabs may be destroyed meanwhile)
    gone: list[bool] = []
    view.destroyed.connect(lambda *_: gone.append(True))
    window.close_tab(window.tabs.indexOf(view))
    del view
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.waitUntil(lambda: bool(gone), timeout=5_000)
    assert gc_policy.frozen_runs() <= holding - 1  # this tab's hold is given back


def test_the_plots_import_brings_what_its_paint_imports_lazily() -> None:
    code = "import sys, loom_desktop.widgets.timeline; print('numpy.ma' in sys.modules)"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.stdout.strip() == "True", out.stderr
