"""What the Runs page says of each run is what the app says elsewhere: the cost in the status
bar's words, hits that name which run they are in, a sort arrow that points the way the list
is sorted, the outcome of each kind of run.

Why: the Cost column was blank where the app says "$0 offline" or "?", five hits in five
demo runs all read "demo.loom.json · step 4 · deploy", and a newest-first list showed
"When ▲" (Qt draws its descending indicator as an up arrow).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor

from loom_desktop.main_window import MainWindow
from tests.core.harness_runs import journal_complete, journal_crashed
from tests.core.library.conftest import make_recording

WAIT = 30_000


def _listed(qtbot: Any, window: MainWindow, folder: Path, count: int) -> dict[str, int]:
    """``folder`` indexed; each listed run's file name -> its row."""
    controller = window.library.controller
    controller.indexer.add_folder(folder)
    qtbot.waitUntil(lambda: len(controller.runs.runs) == count, timeout=WAIT)
    return {Path(r.path).name: i for i, r in enumerate(controller.runs.runs)}


def test_cost_and_outcome_cells_say_what_the_app_says(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    runs_dir.mkdir(parents=True)
    shutil.copy(sample, runs_dir / "sample.loom.json")
    journal_complete(runs_dir)  # answered by loom-harness's scripted model: offline
    journal_crashed(runs_dir)  # its writer died inside charge_card
    make_recording(runs_dir / "proxy")  # the fake upstream's model has no price
    rows = _listed(qtbot, window, runs_dir, 4)
    model = window.library.controller.runs

    def cells(name: str) -> tuple[str, str]:
        return model.index(rows[name], 7).data(), model.index(rows[name], 8).data()

    assert cells("sample.loom.json") == ("$0.1302", "finished")
    assert cells("complete.jsonl") == ("$0 offline", "finished")
    assert cells("crashed.jsonl") == ("$0 offline", "stopped without finishing")
    assert cells("session.loom.json") == ("?", "finished")
    why = model.index(rows["crashed.jsonl"], 8).data(0x03)  # ToolTipRole: why it stopped
    assert "crashed inside tool:charge_card (step 2)" in why


def test_hits_in_same_named_runs_say_which_run(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    for folder in ("monday", "tuesday"):
        (runs_dir / folder).mkdir(parents=True)
        shutil.copy(sample, runs_dir / folder / "demo.loom.json")
    _listed(qtbot, window, runs_dir, 2)
    page = window.library.page
    page.search.setText("tool:git_push")
    hits = window.library.controller.hits
    qtbot.waitUntil(lambda: hits.rowCount() >= 2, timeout=WAIT)
    shown = [hits.index(i).data() for i in range(hits.rowCount())]
    assert {s.split(" · ")[1] for s in shown} == {"monday/demo.loom.json", "tuesday/demo.loom.json"}
    assert all(s.split(" · ")[0].count(":") == 1 for s in shown)  # when its run started
    names = [page.table.model().index(r, 1).data() for r in range(2)]
    assert sorted(names) == ["monday/demo.loom.json", "tuesday/demo.loom.json"]


def _arrow_points_down(window: MainWindow) -> bool:
    """Whether the sort arrow drawn in the "When" header points down (▼): its widest row
    of dark pixels is above its narrowest, as the user sees it."""
    header = window.library.page.table.horizontalHeader()
    image = header.grab().toImage()
    left, width = header.sectionViewportPosition(0), header.sectionSize(0)
    text_right = left + header.fontMetrics().horizontalAdvance("When") + 8
    widths = []
    for y in range(image.height()):
        dark = [
            x
            for x in range(text_right, left + width)
            if QColor(image.pixel(QPoint(x, y))).lightness() < 128
        ]
        if dark:
            widths.append(max(dark) - min(dark))
    assert len(widths) >= 3, "no sort arrow drawn"
    return widths[0] > widths[-1]


def test_the_when_arrow_points_the_way_the_list_is_sorted(
    qtbot: Any, window: MainWindow, sample: Path, runs_dir: Path
) -> None:
    runs_dir.mkdir(parents=True)
    shutil.copy(sample, runs_dir / "old.loom.json")
    shutil.copy(sample, runs_dir / "new.loom.json")
    _listed(qtbot, window, runs_dir, 2)
    c = window.library.controller
    assert (c.sort, c.descending) == ("time", True) and _arrow_points_down(window)
    header = window.library.page.table.horizontalHeader()
    when = QPoint(header.sectionViewportPosition(0) + 10, header.height() // 2)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=when)
    qtbot.waitUntil(lambda: not c.descending, timeout=WAIT)  # oldest first: arrow up
    assert not _arrow_points_down(window)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=when)
    qtbot.waitUntil(lambda: c.descending, timeout=WAIT)
    assert _arrow_points_down(window)
