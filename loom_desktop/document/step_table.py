"""The step list's view: a live run's new rows repaint themselves, not the whole list.

Qt answers a row insert by laying the view out again and repainting all of it
(``QAbstractItemView.doItemsLayout``). A live tab inserts a row for nearly every line
written, so at 200 steps a second the list repainted every visible cell 200 times a
second: most of the GUI thread's work during a live tail, and a new row waited behind
the previous row's repaint (issue 24: a flushed line shown within a frame). Here an
append is laid out without that repaint; the rows repainted are the new ones, and the
visible rows the new steps changed (the previous last step loses its unfinished mark,
for one): the model compares what each visible row reads before and after. Following
the tail scrolls by a row, which Qt does by moving the pixels already drawn.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QTableView

from loom_desktop.document.step_delegate import StepDelegate
from loom_desktop.document.step_list_model import StepListModel


class StepTable(QTableView):
    """A ``QTableView`` over a :class:`StepListModel` that can show appended steps cheaply
    (and paints its cells through a :class:`StepDelegate`, see :meth:`use_model`)."""

    def __init__(self) -> None:
        super().__init__()
        self._appending = False

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        """Qt's paint; the step delegate first reads what its cells share (font, palette)."""
        delegate = self.itemDelegate()
        if isinstance(delegate, StepDelegate):
            delegate.prepare()
        super().paintEvent(event)

    def doItemsLayout(self) -> None:  # noqa: N802 - Qt API
        """Qt's layout after an insert, without its repaint of every row while appending
        (the rows that need it are repainted by :meth:`show_appended`)."""
        if self._appending:
            self.updateGeometries()  # the scroll bar's range: what the layout is for here
            return
        super().doItemsLayout()

    def use_model(self, model: StepListModel) -> None:
        """Show ``model``, its cells drawn by a :class:`StepDelegate`."""
        self.setModel(model)
        self.setItemDelegate(StepDelegate(model, self))

    def visible_rows(self) -> range:
        """The rows at least partly on screen now."""
        rows = self.model().rowCount()
        top = self.rowAt(0)
        if top < 0:
            return range(0)
        bottom = self.rowAt(self.viewport().height() - 1)
        return range(top, rows if bottom < 0 else bottom + 1)

    def show_appended(self, model: StepListModel, follow: bool) -> range:
        """Insert the rows the model's live timeline gained (scrolled to with ``follow``),
        repainting only them and the visible rows they changed; returns the new rows."""
        self.executeDelayedItemsLayout()  # a layout pending for another reason repaints all
        first, offset = model.rowCount(), self.verticalHeader().offset()
        changed = model.append_steps(self.visible_rows())
        self._appending = True
        try:
            self.executeDelayedItemsLayout()  # the insert's own layout, now
        finally:
            self._appending = False
        # At the end of the list its last row is aligned with the bottom, the top row cut;
        # with rows added below, the layout aligns the top row instead: the rows moved,
        # so what is drawn moves with them (the full repaint used to hide it).
        moved = offset - self.verticalHeader().offset()
        if moved:
            self.viewport().scroll(0, moved)
        new = range(first, model.rowCount())
        if follow:
            self.scrollToBottom()  # by a row: Qt moves what is drawn and paints the rest
        viewport, shown = self.viewport(), self.visible_rows()
        for row in (*changed, *new):
            if row in shown:  # the whole row with its grid line (a cell's rect has none)
                top = self.rowViewportPosition(row)
                viewport.update(QRect(0, top, viewport.width(), self.rowHeight(row)))
        return new
