"""Qt models over a run comparison: the aligned rows, and one pair's structural changes.

Adapters only: :class:`CompareModel` reads ``RunDiff.rows`` and the two documents
on demand; a step's one-line summary decodes its payload when a cell is painted
(kept in a small LRU cache), so a 100,000-row comparison costs nothing per row
on the GUI thread. Status colours live here so the view, its header and the
tests agree on them.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from loom_core.diff import (
    EDITED,
    IDENTICAL,
    INPUTS,
    KINDS,
    ONLY_A,
    ONLY_B,
    RESULTS,
    STATUSES,
    Change,
    RunDiff,
)
from loom_core.fork.edits import edit_summary
from loom_core.formats.document import Document, text_and_calls
from loom_core.views.steps import call_text, clip, effect_seq
from loom_desktop.document.step_list_model import format_cost

COLUMNS = ("A #", "A step", "Status", "B #", "B step", "Δ tokens", "Δ cost")
COL_A_SEQ, COL_A, COL_STATUS, COL_B_SEQ, COL_B, COL_D_TOKENS, COL_D_COST = range(7)
StatusRole = Qt.ItemDataRole.UserRole + 1  # the row's status string
_Index = QModelIndex | QPersistentModelIndex
_R = Qt.ItemDataRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_CENTER = int(Qt.AlignmentFlag.AlignCenter)
_CACHE = 4096

# status -> (strong colour: status cell and header; light tint: the row's step cells)
STATUS_COLORS: dict[str, tuple[str, str]] = {
    IDENTICAL: ("#9e9e9e", ""),
    RESULTS: ("#ffb300", "#fff5d6"),
    INPUTS: ("#f57c00", "#ffe6cc"),
    KINDS: ("#e53935", "#ffd9d7"),
    ONLY_A: ("#5c6bc0", "#e3e6f7"),
    ONLY_B: ("#00897b", "#d7f1ee"),
    EDITED: ("#d81b60", "#fce4ec"),  # the timeline's edit colour: the fork point
}
STATUS_LABELS = {
    IDENTICAL: "identical",
    RESULTS: "results differ",
    INPUTS: "inputs differ",
    KINDS: "kinds differ",
    ONLY_A: "only in A",
    ONLY_B: "only in B",
    EDITED: "edited",
}  # inputs differ: the context was edited before this call
EDITED_TIP = (
    "The fork point: the context of this model call was edited (the edit is the "
    "row above), so its inputs differ from the other run's call here"
)
CHEAPER, DEARER = "#2e7d32", "#c62828"  # B spends less / more than A
_Q = {s: (QColor(c), QColor(t) if t else None) for s, (c, t) in STATUS_COLORS.items()}
_WHITE, _DARK, _MUTED = QColor("#ffffff"), QColor("#3e2723"), QColor(STATUS_COLORS[IDENTICAL][0])
_QCHEAPER, _QDEARER = QColor(CHEAPER), QColor(DEARER)


def effect_summary(doc: Document, i: int, limit: int = 160) -> str:
    """One line for effect ``i``, in the step list's style (a model step by its calls)."""
    kind = doc.effects[i].kind or ""
    value = doc.result(i)
    if kind in ("model", "sample") and isinstance(value, dict):
        text, calls = text_and_calls(value)
        return clip("calls " + ", ".join(call_text(c) for c in calls) if calls else text, limit)
    if isinstance(value, str):
        return clip(value, limit)
    if kind == "edit":
        return clip(edit_summary(doc, i, value), limit)
    return clip(json.dumps(value, ensure_ascii=False), limit)


def signed(value: int) -> str:
    """``+12`` / ``−3`` / empty for zero: deltas read at a glance."""
    return "" if not value else f"+{value:,}" if value > 0 else f"−{-value:,}"


def signed_cost(value: float | None) -> str:
    """A USD delta with its sign; ``?`` when a side is unpriced."""
    if value is None or math.isnan(value):
        return "?"
    return "" if abs(value) < 5e-7 else format_cost(value, signed=True)


# -- the header texts (rich text: numbers and fixed labels only, nothing to escape) --
def _color(text: str, color: str, bold: bool = False) -> str:
    return f'<span style="color:{color};{"font-weight:bold" if bold else ""}">{text}</span>'


def header_html(diff: RunDiff) -> str:
    """The identical prefix and the first divergence, or that the runs are identical; runs
    from other tools say they were compared by what each step did (loom_core.diff.substance)."""
    return _header(diff) + (
        " <i>(compared by what each step did: the producers' ids and usage aside)</i>"
        if diff.by_substance
        else ""
    )


def _header(diff: RunDiff) -> str:
    if diff.identical:
        return (
            f"<b>The runs are identical</b>: {len(diff.rows):,} aligned steps with the same "
            "kinds, inputs and results."
        )
    d = diff.first_divergence
    assert d is not None
    where = " ⟷ ".join(
        s
        for s in (
            f"A step {d.a_seq}" if d.a_seq is not None else "",
            f"B step {d.b_seq}" if d.b_seq is not None else "",
        )
        if s
    )
    return (
        f"Identical prefix: <b>{diff.identical_prefix:,}</b> step(s) · First divergence: "
        f"<b>{where}</b> — " + _color(STATUS_LABELS[d.status], STATUS_COLORS[d.status][0], True)
    )


def counts_html(diff: RunDiff) -> str:
    """Rows per status, each in its colour."""
    return " &nbsp; ".join(
        _color(f"● {n:,} {STATUS_LABELS[s]}", STATUS_COLORS[s][0], s != IDENTICAL)
        for s in STATUSES
        if (n := diff.totals.statuses.get(s, 0))
    )


def _whole(html: str) -> str:
    """Kept on one line when the line wraps (it broke "−$0.1110" after its sign)."""
    return f'<span style="white-space:nowrap">{html}</span>'


def totals_html(diff: RunDiff) -> str:
    """Each side's tokens and cost, and B − A (green when B is cheaper, red when dearer)."""
    t = diff.totals

    def side(name: str, s: Any) -> str:
        cost = "cost unknown" if s.cost is None else format_cost(s.cost) or "$0"
        return _whole(
            f"<b>{name}</b>: {s.input_tokens:,} in / {s.output_tokens:,} out tokens · {cost}"
        )

    d = t.delta
    tokens = d.input_tokens + d.output_tokens
    sign = d.cost if d.cost is not None and abs(d.cost) >= 5e-7 else tokens
    color = CHEAPER if sign < 0 else DEARER if sign > 0 else "#616161"
    verdict = "B is cheaper" if sign < 0 else "B is dearer" if sign > 0 else "same spend"
    delta = f"Δ B−A: {_whole(signed(tokens) or '±0')} tokens · {_whole(signed_cost(d.cost) or '±$0')} ({verdict})"
    return f"{side('A', t.a)} &nbsp;│&nbsp; {side('B', t.b)} &nbsp;│&nbsp; {_color(delta, color, True)}"


class CompareModel(QAbstractTableModel):
    """Rows = aligned step pairs of one :class:`RunDiff` (nothing precomputed per row)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.diff: RunDiff | None = None
        self._summaries: OrderedDict[tuple[str, int], str] = OrderedDict()

    def set_diff(self, diff: RunDiff | None) -> None:
        self.beginResetModel()
        self.diff = diff
        self._summaries.clear()
        self.endResetModel()

    def status(self, row: int) -> str:
        assert self.diff is not None
        return self.diff.rows[row].status

    # -- Qt model API -------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.diff is None else len(self.diff.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = _R.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == _R.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = _R.DisplayRole) -> Any:
        if self.diff is None or not index.isValid():
            return None
        row, col = index.row(), index.column()
        r = self.diff.rows[row]
        if role == _R.DisplayRole:
            return self._display(r.a, r.b, r.status, row, col)
        if role == _R.BackgroundRole:
            return self._background(r.status, col)
        if role == _R.ForegroundRole:
            return self._foreground(r.status, row, col)
        if role == _R.TextAlignmentRole:
            return _CENTER if col == COL_STATUS else _RIGHT if col in (0, 3, 5, 6) else None
        if role == _R.ToolTipRole and col in (COL_A, COL_B):
            return self._summary("a" if col == COL_A else "b", r.a if col == COL_A else r.b, 600)
        if role == _R.ToolTipRole and col == COL_STATUS and r.status == EDITED:
            return EDITED_TIP
        if role == StatusRole:
            return r.status
        return None

    # -- cells ----------------------------------------------------------------------
    def _display(self, a: int | None, b: int | None, status: str, row: int, col: int) -> str:
        diff = self.diff
        assert diff is not None
        if col == COL_STATUS:
            return STATUS_LABELS.get(status, status)
        if col in (COL_A_SEQ, COL_A):
            return self._side(diff.a, "a", a, col == COL_A)
        if col in (COL_B_SEQ, COL_B):
            return self._side(diff.b, "b", b, col == COL_B)
        delta = diff.row_delta(row)
        if col == COL_D_TOKENS:
            return signed(delta.input_tokens + delta.output_tokens)
        return "" if a is None and b is None else signed_cost(delta.cost)

    def _side(self, doc: Document, side: str, i: int | None, step: bool) -> str:
        if i is None:
            return ""
        eff = doc.effects[i]
        if not step:
            return str(effect_seq(doc.effects, i))
        depth = eff.depth or 0
        lead = "  " * depth + ("↳ " if depth else "")
        return f"{lead}{eff.kind or '?'} · {self._summary(side, i, 160)}"

    def _summary(self, side: str, i: int | None, limit: int) -> str:
        if i is None or self.diff is None:
            return ""
        doc = self.diff.a if side == "a" else self.diff.b
        if limit != 160:
            return effect_summary(doc, i, limit)
        cached = self._summaries.get((side, i))
        if cached is None:
            cached = self._summaries[(side, i)] = effect_summary(doc, i, limit)
            if len(self._summaries) > _CACHE:
                self._summaries.popitem(last=False)
        return cached

    def _background(self, status: str, col: int) -> QColor | None:
        strong, tint = _Q.get(status, (None, None))
        if col == COL_STATUS:
            return None if status == IDENTICAL else strong
        if status == ONLY_A:  # a gap on B's side: only A's cells are tinted
            return tint if col in (COL_A_SEQ, COL_A) else None
        if status == ONLY_B:
            return tint if col in (COL_B_SEQ, COL_B) else None
        return tint if col in (COL_A_SEQ, COL_A, COL_B_SEQ, COL_B) else None

    def _foreground(self, status: str, row: int, col: int) -> QColor | None:
        if col == COL_STATUS:  # dark text on amber, white on the darker colours
            return _MUTED if status == IDENTICAL else _DARK if status == RESULTS else _WHITE
        if col in (COL_D_TOKENS, COL_D_COST):
            assert self.diff is not None
            d = self.diff.row_delta(row)
            v = d.input_tokens + d.output_tokens if col == COL_D_TOKENS else (d.cost or 0.0)
            return _QCHEAPER if v < 0 else _QDEARER if v > 0 else None
        return _MUTED if status == IDENTICAL else None


CHANGE_COLUMNS = ("Part", "Path", "Change", "A value", "B value")


def value_text(value: Any, limit: int = 200) -> str:
    """A JSON value on one line (strings unquoted), clipped for a table cell."""
    return clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), limit)


class ChangeListModel(QAbstractTableModel):
    """Rows = structural changes of the selected pair: ``(part, Change)``, capped by the core."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.changes: list[tuple[str, Change]] = []

    def set_changes(self, changes: list[tuple[str, Change]]) -> None:
        self.beginResetModel()
        self.changes = list(changes)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.changes)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(CHANGE_COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = _R.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == _R.DisplayRole:
            return CHANGE_COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = _R.DisplayRole) -> Any:
        if not index.isValid() or role not in (_R.DisplayRole, _R.ToolTipRole, _R.ForegroundRole):
            return None
        part, change = self.changes[index.row()]
        col = index.column()
        if role == _R.ForegroundRole:
            return {3: _QDEARER, 4: _QCHEAPER}.get(col) if change.op == "changed" else None
        if col == 0:
            return part
        if col == 1:
            return change.path
        if col == 2:
            return change.op
        if (col == 3 and change.op == "added") or (col == 4 and change.op == "removed"):
            return ""
        value = change.old if col == 3 else change.new
        return value_text(value, 2000 if role == _R.ToolTipRole else 200)
