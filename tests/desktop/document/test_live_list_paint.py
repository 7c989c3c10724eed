"""A live tab's new rows repaint themselves and the rows they changed, not the whole list
(issue 24: a full repaint per insert was most of the GUI thread's work in a live tail)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QImage, QRegion

from loom_core.formats.loader import load
from loom_core.views.steps import flag_marks
from loom_core.views.timeline import F_UNFINISHED, TimelineBuilder
from loom_desktop.document.step_list_model import COL_SUMMARY, StepListModel
from loom_desktop.main_window import MainWindow
from tests.core.live_helpers import effect, header, intent, model_result, tool_pairs


class _Painted(QObject):
    """Collects the regions a widget is asked to paint."""

    def __init__(self) -> None:
        super().__init__()
        self.region = QRegion()

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint:
            self.region = self.region.united(event.region())
        return False


def test_appended_steps_report_the_rechecked_rows_that_read_differently(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(
        header("go") + effect(0, "model", model_result("a", ("tick",))) + b"".join(tool_pairs(1, 6))
    )
    builder = TimelineBuilder(load(path))
    builder.extend(5, unfinished=True)  # the journal ends inside an effect: the last step…
    model = StepListModel()
    model.set_timeline(builder.tl)
    last = model.rowCount() - 1
    assert builder.tl.flags[last] & F_UNFINISHED
    shown = [model.index(row, COL_SUMMARY).data() for row in range(model.rowCount())]
    assert shown[last].startswith(flag_marks(F_UNFINISHED))
    builder.extend(6)  # …until its effect comes: the mark moves on
    assert model.append_steps(range(model.rowCount())) == [last]
    assert model.rowCount() == len(builder.tl)
    assert model.index(last, COL_SUMMARY).data() == shown[last].removeprefix(
        flag_marks(F_UNFINISHED)
    )


def test_a_live_insert_repaints_the_new_row_and_the_row_it_changed_only(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(
        header("go")
        + effect(0, "model", model_result("a", ("tick",)))
        + b"".join(tool_pairs(1, 60))
        + intent(61, "tool:tick")  # written, not answered yet: the last row is unfinished
    )
    view = window.open_path(str(path))
    view.live.tailer.poll_interval = 0.1
    qtbot.waitUntil(lambda: view.model.rowCount() == 62, timeout=15_000)  # the prompt, 61 steps
    qtbot.waitUntil(lambda: view.session.step == 61, timeout=5000)  # followed to the end
    table = view.table
    top = table.rowAt(0)
    assert top > 10 and table.rowAt(table.viewport().height() - 1) in (61, -1), "at the end"
    table.setFocus()  # its repaint in the focused colours comes first…
    qtbot.waitUntil(table.hasFocus)
    table.viewport().repaint()  # …now
    painted = _Painted()
    table.viewport().installEventFilter(painted)
    with open(path, "ab") as fh:
        fh.write(effect(61, "tool:tick", "tick 61 ok"))
    qtbot.waitUntil(lambda: view.model.rowCount() == 63, timeout=15_000)
    qtbot.waitUntil(lambda: view.session.step == 62, timeout=5000)
    qtbot.waitUntil(lambda: painted.region.contains(table.visualRect(view.model.index(62, 0))))
    changed = table.visualRect(view.model.index(61, COL_SUMMARY))  # lost its unfinished mark
    assert painted.region.contains(changed)
    middle = table.visualRect(view.model.index((table.rowAt(0) + 62) // 2, 0))
    assert not painted.region.intersects(middle), "a row nothing changed was not repainted"


def _shown_is_drawn(table) -> bool:
    """What the window shows of the list (its back buffer) is what a full repaint draws."""
    viewport = table.viewport()
    at = viewport.mapTo(viewport.window(), viewport.rect().topLeft())
    window = viewport.window().windowHandle()
    shown = window.screen().grabWindow(
        window.winId(), at.x(), at.y(), viewport.width(), viewport.height()
    )
    rgb = QImage.Format.Format_RGB32
    return shown.toImage().convertToFormat(rgb) == viewport.grab().toImage().convertToFormat(rgb)


def test_the_list_followed_past_its_first_screen_shows_what_it_holds(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    """Following the end of the list, its last row sits on the bottom edge and the top row
    is cut; rows added below move what is drawn with them, whatever was shown before."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + effect(0, "model", model_result("a", ("tick",))))
    view = window.open_path(str(path))
    view.live.tailer.poll_interval = 0.1
    table, seq = view.table, 1
    qtbot.waitUntil(lambda: view.model.rowCount() == 2, timeout=15_000)
    for count in (5, 9, 13, 17, 21, 25, 29, 33, 37):  # from part of a screen to two
        with open(path, "ab") as fh:
            fh.write(b"".join(tool_pairs(seq, count - seq)))
        seq = count
        qtbot.waitUntil(lambda n=count: view.model.rowCount() == n + 1, timeout=15_000)
        qtbot.waitUntil(lambda: _shown_is_drawn(table), timeout=10_000)
    assert table.rowAt(0) > 0, "the list was followed past its first screen"
