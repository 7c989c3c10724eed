"""The step list's cells drawn from the model's texts, without Qt's layout of each text.

A far jump paints a page of new rows, six cells each. Qt's item delegate asks the model
for seven roles per cell (a call into Python each), then its style lays each text out
whole to size the cell's parts, lays it out again to elide it to the column, and once
more to draw it: a summary of 160 characters shaped three times to show the 50 that
fit. That was most of the step list's share of a jump (issue 24: far jumps within a
frame). Here a plain cell reads its text, alignment and colour in one call
(:meth:`StepListModel.cell_style`, the same answers :meth:`StepListModel.data` gives),
elides it once and draws it where Qt's style would: the same pixels
(``tests/desktop/document/test_step_delegate.py`` compares them). A cell Qt draws
otherwise (the focused one, a text of several lines, a disabled view, any cell under
a style other than Fusion) goes to Qt's own delegate.
"""

from __future__ import annotations

from math import ceil

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, Qt
from PySide6.QtGui import QFontMetricsF, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from loom_desktop.document.step_list_model import StepListModel

_PANEL = QStyle.PrimitiveElement.PE_PanelItemViewItem
_State = QStyle.StateFlag
_SELECTED, _ACTIVE = _State.State_Selected.value, _State.State_Active.value
# cells Qt's delegate draws: the focused one (its frame), one being edited, a disabled view
_QT_DRAWS = _State.State_HasFocus.value | _State.State_Editing.value
_ENABLED = _State.State_Enabled.value
_ELIDE = Qt.TextElideMode.ElideRight  # the view's, as Qt's style elides


class StepDelegate(QStyledItemDelegate):
    """Paints a :class:`StepListModel`'s plain cells itself, the others through Qt's."""

    def __init__(self, model: StepListModel, view: QWidget) -> None:
        super().__init__(view)
        self._model, self._view = model, view
        self.prepare()

    def prepare(self) -> None:
        """Read what every cell of a paint shares (the view's font, palette and style),
        once per paint rather than once per cell."""
        view = self._view
        style, palette = view.style(), view.palette()
        # Fusion (Linux's, and the offscreen tests') draws an item as Qt's common style does,
        # which is what paint() repeats; Windows' and macOS' styles draw their own
        self._own = style.metaObject().className() == "QFusionStyle"
        self._style, self._metrics = style, view.fontMetrics()
        # the text's inset from the cell's edges, as Qt's style takes it
        self._margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1
        exact = QFontMetricsF(view.font())
        self._ascent, self._height = exact.ascent(), ceil(exact.ascent() + exact.descent())
        self._advance = exact.horizontalAdvance
        groups = QPalette.ColorGroup.Normal, QPalette.ColorGroup.Inactive  # active window or not
        self._text = [palette.color(g, QPalette.ColorRole.Text) for g in groups]
        self._selected = [palette.color(g, QPalette.ColorRole.HighlightedText) for g in groups]

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        if not self._own:
            super().paint(painter, option, index)
            return
        text, right, color = self._model.cell_style(index.row(), index.column())
        state = option.state.value
        # not printable: a line break (Qt lays the text out on several lines), a tab, a
        # control or format character or an unusual space: Qt's way, to be sure
        if state & _QT_DRAWS or not state & _ENABLED or not text.isprintable():
            super().paint(painter, option, index)
            return
        view = self._view
        self._style.drawPrimitive(_PANEL, option, painter, view)  # background, selection
        if not text:
            return
        group = 0 if state & _ACTIVE else 1
        if state & _SELECTED:
            painter.setPen(self._selected[group])
        else:
            painter.setPen(self._text[group] if color is None else color)
        rect, margin = option.rect, self._margin
        left, top, width, height = rect.x(), rect.y(), rect.width(), rect.height()
        width -= 2 * margin
        shown = self._metrics.elidedText(text, _ELIDE, width)
        # where Qt's style puts the line: centred by its whole height, baseline at ascent;
        # aligned right, at its room less the text's advance
        top += (height - self._height) // 2
        x = left + margin + (width - self._advance(shown) if right else 0.0)
        painter.drawText(QPointF(x, top + self._ascent), shown)
