"""The step list draws its cells itself: the pixels Qt's delegate drew, without asking the
model for each role of each cell (issue 24: a far jump paints a page of new rows)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QStyledItemDelegate, QStyleFactory

from loom_core.formats.loader import load
from loom_core.views.timeline import F_ERROR, build_timeline
from loom_desktop.document.step_delegate import StepDelegate
from loom_desktop.document.step_list_model import StepListModel
from loom_desktop.document.step_table import StepTable
from loom_desktop.main_window import MainWindow


def _shot(qtbot, table, delegate) -> QImage:
    table.setItemDelegate(delegate)
    return table.viewport().grab().toImage()


def test_the_list_shows_the_pixels_qts_delegate_drew(
    qtbot, window: MainWindow, sample, open_and_wait
) -> None:
    view = open_and_wait(window, sample)
    table, tl = view.table, view.model.timeline
    assert isinstance(table.itemDelegate(), StepDelegate)
    red = next(s for s in range(len(tl)) if tl.flags[s] & F_ERROR)
    # a red row selected and not, colored kinds, numbers aligned right, summaries elided,
    # a narrower list (elided sooner), and the focused cell (Qt's delegate draws it)
    for step, width, focus in ((red, 1280, False), (red + 1, 1280, False), (2, 800, True)):
        window.resize(width, 800)
        view.session.set_step(step)
        if focus:
            table.setFocus()
        qtbot.wait(1)  # the resize's layout and the selection's repaint
        qt = _shot(qtbot, table, QStyledItemDelegate(table))
        ours = _shot(qtbot, table, StepDelegate(view.model, table))
        assert qt == ours, (step, width)


def test_a_paint_of_the_list_asks_the_model_for_no_role(qtbot, sample) -> None:
    """Qt's delegate asked for seven roles of every cell painted (a call into Python
    each); the list's delegate reads a cell in one call."""
    asked: list[int] = []
    cells: list[tuple[int, int]] = []

    class Counting(StepListModel):
        def data(self, index, role=Qt.ItemDataRole.DisplayRole):  # noqa: ANN001, ANN201
            asked.append(role)
            return super().data(index, role)

        def cell_style(self, row: int, col: int):  # noqa: ANN201
            cells.append((row, col))
            return super().cell_style(row, col)

    model = Counting()
    model.set_timeline(build_timeline(load(sample)))
    table = StepTable()
    qtbot.addWidget(table)
    table.use_model(model)
    table.resize(800, 400)
    table.show()
    qtbot.waitExposed(table)
    table.viewport().grab()
    assert not asked
    assert len(cells) >= 10 * model.columnCount()  # it painted: a screen of rows, each cell once


def test_under_another_style_the_list_is_drawn_by_qts_delegate(qtbot, sample) -> None:
    """What the delegate repeats is how Fusion draws an item; another style (Windows',
    macOS') draws its own, so the list leaves every cell to it."""
    model = StepListModel()
    model.set_timeline(build_timeline(load(sample)))
    table = StepTable()
    qtbot.addWidget(table)
    table.use_model(model)
    style = QStyleFactory.create("Windows")
    table.setStyle(style)
    table.resize(800, 400)
    table.show()
    qtbot.waitExposed(table)
    qt = _shot(qtbot, table, QStyledItemDelegate(table))
    assert _shot(qtbot, table, StepDelegate(model, table)) == qt
    plain = table.grab().toImage()
    table.setStyle(QStyleFactory.create("Fusion"))
    assert table.grab().toImage() != plain  # the styles do draw differently
