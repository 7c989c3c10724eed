"""The Qt model over a timeline's steps: an adapter, never a copy.

Rows are built lazily from the core arrays; only the summary column needs a
payload decode, and those strings live in a small LRU cache so scrolling a
100,000-step list never decodes more than what is on screen. A filter is a list
of step indices computed in a worker; the model maps rows through it.

Every cell is drawn from :func:`loom_core.views.steps.step_row`, the function
``python -m loom_core steps`` prints, so the list and the CLI cannot disagree: a
step is numbered by its ``seq``, and a user prompt row has no number.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics

from loom_core.views.pricing import format_usd
from loom_core.views.steps import SUMMARY_CHARS, StepRow, flag_marks, step_row, step_summary
from loom_core.views.timeline import F_BLOCKED, F_DENIED, F_ERROR, Timeline
from loom_desktop.style import kind_color

COLUMNS = ("#", "Kind", "Agent", "Summary", "Tokens", "Cost")
COL_STEP, COL_KIND, COL_AGENT, COL_SUMMARY, COL_TOKENS, COL_COST = range(6)
StepRole = Qt.ItemDataRole.UserRole + 1
_DISPLAY, _FOREGROUND = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole
_ALIGN = Qt.ItemDataRole.TextAlignmentRole
_ROLES = frozenset({_DISPLAY, StepRole, _FOREGROUND, _ALIGN, Qt.ItemDataRole.ToolTipRole})
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)  # computed once
_NUMERIC = frozenset({0, 4, 5})  # step, tokens, cost
_ERROR_RED = QColor("#c62828")
_RED = F_ERROR | F_BLOCKED | F_DENIED  # a row with one of these flags is drawn in red
_CACHE = 4096
_CELL_ROWS = 1024  # rows' cell texts kept: a few screens' worth
_Index = QModelIndex | QPersistentModelIndex


# the widest usual cell of each fixed column: widths follow the font, so at any font size
# tokens and cost fit beside a readable summary instead of needing a horizontal scroll
_SAMPLE_CELLS = {
    COL_STEP: "99999",
    COL_KIND: "tool:write_file",
    COL_AGENT: "reviewer",
    COL_TOKENS: "99,999",
    COL_COST: "$0 offline",
}


def column_widths(metrics: QFontMetrics) -> dict[int, int]:
    """Column -> width in pixels for the fixed columns (the summary stretches)."""
    pad = metrics.horizontalAdvance("xxx")
    return {col: metrics.horizontalAdvance(text) + pad for col, text in _SAMPLE_CELLS.items()}


def format_cost(value: float, signed: bool = False) -> str:
    """Dollars as the core writes them (:func:`loom_core.views.pricing.format_usd`)."""
    return format_usd(value, signed)


def _cell_texts(row: StepRow) -> tuple[str, ...]:
    """The texts of a row's cells, in COLUMNS order."""
    return (
        "" if row.seq is None else str(row.seq),
        "  " * row.depth + ("↳ " if row.depth else "") + row.kind,
        row.agent,
        flag_marks(row.flags) + row.summary,
        f"{row.tokens:,}" if row.tokens else "",
        row.cost_text,
    )


class StepListModel(QAbstractTableModel):
    """Rows = steps of the current timeline (optionally filtered)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.timeline: Timeline | None = None
        self.rows: array[int] | None = None  # filtered steps, or None for all
        self._count = 0  # steps announced to views (a live timeline grows before we say so)
        self._summaries: OrderedDict[int, str] = OrderedDict()
        # Each visible row's six cell texts. A paint asks for every cell of every visible
        # row (a live tab repaints them at each insert, a scrub at each move): one row
        # computed once, not once per cell. Dropped whenever rows may read differently.
        self._cells: dict[int, tuple[str, ...]] = {}
        self.dataChanged.connect(self._forget_cells)  # e.g. a live run's shield decisions
        self._bold = QFont()
        self._bold.setBold(True)

    # -- feeding ----------------------------------------------------------------
    def set_timeline(self, timeline: Timeline | None) -> None:
        self.beginResetModel()
        self.timeline = timeline
        self.rows = None
        self._count = len(timeline) if timeline is not None else 0
        self._summaries.clear()
        self._cells.clear()
        self.endResetModel()

    def append_steps(self, recheck: Iterable[int] = ()) -> list[int]:
        """Announce steps a live timeline gained since the last call, as row inserts.

        New steps can change how earlier rows read (the previous last step loses its
        unfinished mark): returns the rows among ``recheck`` (the ones on screen) that
        read differently now, so a view repaints those and not every row."""
        if self.timeline is None or len(self.timeline) <= self._count:
            return []
        before = {row: self._cells.get(self.step_at(row)) for row in recheck}
        self._cells.clear()  # rows not rechecked are built again when next shown
        new = len(self.timeline)
        if self.rows is None:
            self.beginInsertRows(QModelIndex(), self._count, new - 1)
            self._count = new
            self.endInsertRows()
        else:
            self._count = new  # filtered views are refreshed by re-running the filter
        return [row for row, cells in before.items() if cells != self._row_cells(row)]

    def set_rows(self, rows: array[int] | None) -> None:
        """Show only ``rows`` (sorted step indices), or every step for ``None``."""
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def append_rows(self, steps: array[int]) -> None:
        """Show ``steps`` too, after the rows shown (a filter streaming its matches in)."""
        if self.rows is None or not len(steps):
            return
        first = len(self.rows)
        self.beginInsertRows(QModelIndex(), first, first + len(steps) - 1)
        self.rows.extend(steps)
        self.endInsertRows()

    def step_at(self, row: int) -> int:
        return row if self.rows is None else self.rows[row]

    def row_of(self, step: int) -> int:
        """The row showing ``step``, or -1 when the filter hides it."""
        if self.rows is None:
            return step if 0 <= step < self._count else -1
        i = bisect_left(self.rows, step)
        return i if i < len(self.rows) and self.rows[i] == step else -1

    # -- Qt model API -------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() or self.timeline is None:
            return 0
        return self._count if self.rows is None else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Views ask for a dozen roles per cell on every paint: refuse the unused ones first.
        if role not in _ROLES or self.timeline is None or not index.isValid():
            return None
        row, col = index.row(), index.column()
        step = row if self.rows is None else self.rows[row]
        if role == _DISPLAY:
            return self._display(step, col)
        if role == _FOREGROUND:
            return self._foreground(step, col)
        if role == _ALIGN:
            return _RIGHT if col in _NUMERIC else None
        if role == StepRole:
            return step
        if col == COL_SUMMARY:  # the tooltip
            return step_summary(self.timeline, step, 600)
        return None

    # -- cells --------------------------------------------------------------------
    def step_row(self, step: int) -> StepRow:
        """What row ``step`` shows (the core's row; its summary from the cache)."""
        assert self.timeline is not None
        return step_row(self.timeline, step, SUMMARY_CHARS, self._summary(step))

    def cell_style(self, row: int, col: int) -> tuple[str, bool, QColor | None]:
        """What a paint of cell (``row``, ``col``) shows, in one call: its text, whether it
        is aligned right, and its colour (None: the palette's); :meth:`data`'s answers
        (see :mod:`.step_delegate`)."""
        step = row if self.rows is None else self.rows[row]
        cells = self._step_cells(step)
        return cells[col], col in _NUMERIC, self._foreground(step, col)

    def _display(self, step: int, col: int) -> str:
        return self._step_cells(step)[col]

    def _row_cells(self, row: int) -> tuple[str, ...]:
        return self._step_cells(self.step_at(row))

    def _step_cells(self, step: int) -> tuple[str, ...]:
        """The row's six cell texts, then whether it is drawn in red (what a paint shows)."""
        cells = self._cells.get(step)
        if cells is None:
            if len(self._cells) >= _CELL_ROWS:
                self._cells.clear()
            assert self.timeline is not None
            red = "red" if self.timeline.flags[step] & _RED else ""
            cells = self._cells[step] = (*_cell_texts(self.step_row(step)), red)
        return cells

    def _forget_cells(self, top: QModelIndex, bottom: QModelIndex, *_roles: object) -> None:
        """Rows announced changed are built again (the others' texts stay: a live tab
        compares them when it appends, see :meth:`append_steps`)."""
        if not (top.isValid() and bottom.isValid()):
            self._cells.clear()
            return
        for row in range(top.row(), bottom.row() + 1):
            self._cells.pop(self.step_at(row), None)

    def _summary(self, step: int) -> str:
        cached = self._summaries.get(step)
        if cached is None:
            assert self.timeline is not None
            cached = step_summary(self.timeline, step, SUMMARY_CHARS)
            self._summaries[step] = cached
            if len(self._summaries) > _CACHE:
                self._summaries.popitem(last=False)
        return cached

    def _foreground(self, step: int, col: int) -> QColor | None:
        tl = self.timeline
        assert tl is not None
        if tl.flags[step] & _RED:
            return _ERROR_RED
        if col == COL_KIND:
            return kind_color(tl.kind[step])
        return None
