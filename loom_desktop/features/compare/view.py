"""The "A ⟷ B" tab: two runs as aligned rows, the first divergence, and what differs in a pair.

Comparing and diffing a pair both run in workers (each can take a second on
100,000-step runs): the tab says "comparing…" until the :class:`RunDiff` arrives,
then selects the first divergence. Selecting a row asks a second worker for that
pair's word diff and structural diffs; the HTML is built there too, so the GUI
thread only sets it. ``n`` / ``p`` jump between rows that are not identical.
"""

from __future__ import annotations

import html
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from loom_core.diff import IDENTICAL, PairDetail, RunDiff, WordOp, compare, pair_detail
from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.loader import load
from loom_desktop.features.compare.model import (
    COL_A,
    COL_A_SEQ,
    COL_B,
    COL_B_SEQ,
    COL_STATUS,
    STATUS_LABELS,
    ChangeListModel,
    CompareModel,
    counts_html,
    header_html,
    totals_html,
)
from loom_desktop.infra.workers import Task
from loom_desktop.keys import COMPARE_KEYS, bind

Side = Document | str  # a loaded run, or a path to load in the worker
MAX_HTML_CHARS = 100_000  # per side: a giant tool result is cut, not handed whole to Qt
_DEL = "background:#ffd7d5;color:#b71c1c;text-decoration:line-through"
_INS = "background:#d4f5dc;color:#1b5e20"


@dataclass(frozen=True)
class Compared:
    """A worker's comparison: the diff, the rows that differ, the first pair's detail."""

    diff: RunDiff
    differences: array[int]
    first: PairView | None


@dataclass(frozen=True)
class PairView:
    """One pair ready to show: its detail and the two panes' HTML."""

    row: int
    detail: PairDetail
    html_a: str
    html_b: str


def diff_html(ops: Sequence[WordOp], side: str, text: str | None) -> str:
    """One side of a word diff: A strikes deletions in red, B marks insertions in green."""
    if text is None:
        return f"<p><i>— no step in {side.upper()} —</i></p>"
    parts, size = [], 0
    for op in ops:
        chunk = op.a if side == "a" else op.b
        if not chunk:
            continue
        if size + len(chunk) > MAX_HTML_CHARS:
            parts.append(f"<i> … ({len(text) - size:,} more characters)</i>")
            break
        size += len(chunk)
        escaped = html.escape(chunk)
        parts.append(
            escaped
            if op.op == "equal"
            else f'<span style="{_DEL if side == "a" else _INS}">{escaped}</span>'
        )
    return (
        '<div style="white-space:pre-wrap;font-family:monospace">'
        + ("".join(parts) or "<i>(empty)</i>")
        + "</div>"
    )


def _pair_view(diff: RunDiff, row: int) -> PairView:
    detail = pair_detail(diff, row)
    return PairView(
        row,
        detail,
        diff_html(detail.text_diff, "a", detail.a_text),
        diff_html(detail.text_diff, "b", detail.b_text),
    )


def _load(side: Side) -> Document:
    return side if isinstance(side, Document) else load(side)


def run_compare(a: Side, b: Side) -> Compared:
    """Load what is not loaded, compare, and prepare the first divergence (worker side)."""
    diff = compare(_load(a), _load(b))
    differences = array("q", (k for k, r in enumerate(diff.rows) if r.status != IDENTICAL))
    first = diff.first_divergence
    return Compared(diff, differences, _pair_view(diff, first.row) if first else None)


class _StatusDelegate(QStyledItemDelegate):
    """Paints the status colour even on the selected row (a frame marks the selection)."""

    def paint(self, painter: Any, option: Any, index: QModelIndex | QPersistentModelIndex) -> None:
        bg = index.data(Qt.ItemDataRole.BackgroundRole)
        if not isinstance(bg, QColor):
            super().paint(painter, option, index)
            return
        painter.save()
        painter.fillRect(option.rect, bg)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.setPen(QPen(option.palette.highlight().color(), 3))
            painter.drawRect(option.rect.adjusted(1, 1, -2, -2))
        painter.setPen(index.data(Qt.ItemDataRole.ForegroundRole) or QColor("#000000"))
        painter.drawText(option.rect, int(Qt.AlignmentFlag.AlignCenter), index.data() or "")
        painter.restore()


class CompareView(QWidget):
    """A tab comparing run A with run B; ``failed(path, cause)`` if a side cannot be loaded."""

    ready = Signal()
    failed = Signal(str, str)
    detail_shown = Signal(int)

    def __init__(self, a: Side, b: Side, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sides = (a, b)
        self.names = tuple(Path(s.path if isinstance(s, Document) else s).name for s in (a, b))
        self.title = f"{self.names[0]} ⟷ {self.names[1]}"
        self.state = "idle"  # comparing | ready | failed
        self.diff: RunDiff | None = None
        self.differences = array("q")
        self.detail: PairDetail | None = None
        self.shown_row = -1  # the row whose pair the lower panes show
        self._build()
        self._compare_task = Task(self)
        self._compare_task.finished.connect(self._on_compared)
        self._compare_task.failed.connect(self._on_failed)
        self._detail_task = Task(self)
        self._detail_task.finished.connect(self._show_pair)
        self._detail_task.failed.connect(
            lambda exc: self.pair_label.setText(
                f"Cannot diff this pair: {type(exc).__name__}: {exc}"
            )
        )

    # -- layout -----------------------------------------------------------------------
    def _build(self) -> None:
        self.busy_label = QLabel(
            f"Comparing {self.title}…", textFormat=Qt.TextFormat.PlainText, wordWrap=True
        )
        self.busy_bar = QProgressBar(minimum=0, maximum=0)
        self.busy_bar.setMaximumWidth(160)
        rich = Qt.TextFormat.RichText
        # they wrap: one line each was wider than a 1000 px window beside a panel, and
        # the window grew (or squeezed its panels) to fit them
        self.header_label, self.counts_label, self.totals_label = (
            QLabel(textFormat=rich, wordWrap=True) for _ in range(3)
        )
        self.first_button = QPushButton("Go to first divergence")
        self.first_button.setEnabled(False)
        self.first_button.clicked.connect(self.go_first_divergence)
        top = QHBoxLayout()
        for w in (self.busy_label, self.busy_bar):
            top.addWidget(w)
        top.addWidget(self.header_label, 1)
        top.addWidget(self.first_button)
        self.model = CompareModel(self)
        self.table = self._table(self.model)
        self.table.setItemDelegateForColumn(COL_STATUS, _StatusDelegate(self.table))
        for col, width in ((0, 56), (2, 110), (3, 56), (5, 80), (6, 100)):
            self.table.setColumnWidth(col, width)
        for col in (COL_A, COL_B):
            self.table.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        self.pair_label = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        self.text_a, self.text_b = QTextBrowser(), QTextBrowser()
        texts = QSplitter(Qt.Orientation.Horizontal)
        texts.addWidget(self.text_a)
        texts.addWidget(self.text_b)
        self.changes_model = ChangeListModel(self)
        self.changes = self._table(self.changes_model)
        self.changes.horizontalHeader().setStretchLastSection(True)
        for col, width in ((0, 80), (1, 200), (2, 70), (3, 260)):
            self.changes.setColumnWidth(col, width)
        lower = QWidget()
        lay = QVBoxLayout(lower)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.pair_label)
        inner = QSplitter(Qt.Orientation.Vertical)
        inner.addWidget(texts)
        inner.addWidget(self.changes)
        inner.setSizes([220, 110])
        lay.addWidget(inner)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(lower)
        self.splitter.setSizes([380, 360])
        outer = QVBoxLayout(self)
        outer.addLayout(top)
        outer.addWidget(self.counts_label)
        outer.addWidget(self.totals_label)
        outer.addWidget(self.splitter, 1)
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _p: self._on_row(cur))
        bind(self, COMPARE_KEYS, {"N": self.next_difference, "P": self.previous_difference})

    @staticmethod
    def _table(model: Any) -> QTableView:
        table = QTableView()
        table.setModel(model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        table.verticalHeader().setDefaultSectionSize(22)
        table.setWordWrap(False)
        return table

    # -- work -------------------------------------------------------------------------
    def start(self) -> None:
        """Compare in the background; ``ready`` (first divergence selected) or ``failed`` follows."""
        self.state = "comparing"
        a, b = self.sides
        self._compare_task.start(lambda _ctx: run_compare(a, b))

    def _on_compared(self, result: Compared) -> None:
        self.diff, self.differences = result.diff, result.differences
        self.busy_label.hide()
        self.busy_bar.hide()
        self.header_label.setText(header_html(result.diff))
        self.counts_label.setText(counts_html(result.diff))
        self.totals_label.setText(totals_html(result.diff))
        self.first_button.setEnabled(not result.diff.identical)
        self.model.set_diff(result.diff)
        self.state = "ready"
        if result.first is not None:
            self._show_pair(result.first)  # already computed: no second trip to a worker
        self.select_row(result.first.row if result.first else 0)
        self.table.setFocus()
        self.ready.emit()

    def _on_failed(self, exc: object) -> None:
        self.state = "failed"
        if isinstance(exc, LoadError):
            self.failed.emit(exc.path, str(exc.cause))
        else:
            self.failed.emit(self.title, f"{type(exc).__name__}: {exc}")

    def _on_row(self, current: QModelIndex) -> None:
        diff, row = self.diff, current.row()
        if diff is None or row < 0 or row == self.shown_row:
            return
        self.pair_label.setText(f"{self._pair_name(row)} · loading the pair…")
        self._detail_task.start(lambda ctx: None if ctx.cancelled() else _pair_view(diff, row))

    def _show_pair(self, pair: PairView | None) -> None:
        if pair is None or self.diff is None:
            return
        self.detail, self.shown_row = pair.detail, pair.row
        d = pair.detail
        self.text_a.setHtml(pair.html_a)
        self.text_b.setHtml(pair.html_b)
        changes = [("arguments", c) for c in d.args_diff] + [("result", c) for c in d.result_diff]
        self.changes_model.set_changes(changes)
        self.pair_label.setText(
            f"{self._pair_name(pair.row)} · {STATUS_LABELS[d.row.status]} · "
            f"{len(changes)} structural change(s)"
        )
        self.detail_shown.emit(pair.row)

    def _pair_name(self, row: int) -> str:
        """``A step 14 ⟷ B step 14``: the aligned pair by its steps' seqs (a row is no step)."""
        names = [
            f"{side} step {seq}"
            for side, col in (("A", COL_A_SEQ), ("B", COL_B_SEQ))
            if (seq := self.model.index(row, col).data())
        ]
        return " ⟷ ".join(names)

    # -- navigation ---------------------------------------------------------------------
    def current_row(self) -> int:
        return self.table.currentIndex().row()

    def select_row(self, row: int) -> None:
        if not 0 <= row < self.model.rowCount():
            return
        index = self.model.index(row, COL_STATUS)
        sel = self.table.selectionModel()
        sel.setCurrentIndex(index, sel.SelectionFlag.ClearAndSelect | sel.SelectionFlag.Rows)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def go_first_divergence(self) -> None:
        if self.diff is not None and self.diff.first_divergence is not None:
            self.select_row(self.diff.first_divergence.row)

    def next_difference(self) -> None:
        k = bisect_right(self.differences, self.current_row())
        if k < len(self.differences):
            self.select_row(self.differences[k])

    def previous_difference(self) -> None:
        k = bisect_left(self.differences, self.current_row()) - 1
        if k >= 0:
            self.select_row(self.differences[k])

    def shutdown(self) -> None:
        """Drop outstanding work (the tab is closing)."""
        self._compare_task.cancel()
        self._detail_task.cancel()
