"""The Qt models of the doctor and heal: a checkup's findings, and a heal's candidate repairs.

Adapters only: the rows are the core's frozen ``Finding`` objects (and the heal's
``Candidate`` snapshots), never copies of trace data. What the views need besides
them -- where each finding sits in the step list and where clicking it should
jump -- is computed once per checkup by :func:`locate`, because a finding speaks
in log ``seq`` numbers and the step list numbers steps with the user episodes
interleaved.
"""

from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

SEVERITY_COLORS = {"high": "#d32f2f", "warn": "#f9a825"}
OTHER_SEVERITY = "#78909c"
FindingRole = Qt.ItemDataRole.UserRole + 1
JumpRole = Qt.ItemDataRole.UserRole + 2
_Index = QModelIndex | QPersistentModelIndex
_DISPLAY, _ALIGN = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


# -- where a finding is ------------------------------------------------------------------

def gui_step(doc: Any, tl: Any, seq: int | None) -> int | None:
    """The step-list number of log ``seq`` (past the parent's log: shifted by its episodes)."""
    if seq is None or doc is None or tl is None:
        return None
    effects = doc.effects
    index = seq if 0 <= seq < len(effects) and effects[seq].seq == seq else next(
        (i for i, e in enumerate(effects) if e.seq == seq), None)
    if index is not None and index < len(tl.step_of_effect):
        return int(tl.step_of_effect[index])
    return seq + max(0, len(tl) - len(effects))


def locate(finding: Any, doc: Any, tl: Any) -> tuple[int | None, int | None]:
    """(the step where the item entered, the step to jump to: the first model step that saw it)."""
    entered = None
    if finding.effect is None and finding.episode is not None and tl is not None:
        try:
            entered = tl.episode_of.index(finding.episode)
        except ValueError:
            entered = None
    if entered is None:
        entered = gui_step(doc, tl, finding.step)
    jump = gui_step(doc, tl, finding.model_step) if finding.model_step is not None else None
    return entered, entered if jump is None else jump


def severity_color(severity: str) -> str:
    return SEVERITY_COLORS.get(severity, OTHER_SEVERITY)


_QCOLORS: dict[str, QColor] = {}  # one per severity: views ask on every paint


# -- the findings -----------------------------------------------------------------------

FINDING_COLUMNS = ("Severity", "Kind", "Step", "Tokens", "Share", "Finding", "Snippet")
F_SEVERITY, F_KIND, F_STEP, F_TOKENS, F_SHARE, F_MESSAGE, F_SNIPPET = range(7)


class FindingsModel(QAbstractTableModel):
    """One row per finding of the current tab's checkup, in the checkup's order (by step)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.findings: tuple[Any, ...] = ()
        self.steps: list[tuple[int | None, int | None]] = []  # (entered, jump) per finding

    def set_findings(self, findings: Sequence[Any],
                     steps: Sequence[tuple[int | None, int | None]]) -> None:
        self.beginResetModel()
        self.findings = tuple(findings)
        self.steps = list(steps)
        self.endResetModel()

    def finding_at(self, row: int) -> Any:
        return self.findings[row] if 0 <= row < len(self.findings) else None

    def jump_of(self, row: int) -> int | None:
        return self.steps[row][1] if 0 <= row < len(self.steps) else None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.findings)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(FINDING_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = _DISPLAY) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAY:
            return FINDING_COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = _DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.findings):
            return None
        f, col = self.findings[index.row()], index.column()
        if role == _DISPLAY:
            return self._display(index.row(), f, col)
        if role == Qt.ItemDataRole.DecorationRole and col == F_SEVERITY:
            return _QCOLORS.setdefault(f.severity, QColor(severity_color(f.severity)))
        if role == Qt.ItemDataRole.ForegroundRole and col == F_SEVERITY:
            return QColor(severity_color(f.severity)).darker(150)
        if role == _ALIGN and col in (F_STEP, F_TOKENS, F_SHARE):
            return _RIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{f.message}\n{f.quoted_snippet()}"
        if role == FindingRole:
            return f
        if role == JumpRole:
            return self.steps[index.row()][1]
        return None

    def _display(self, row: int, f: Any, col: int) -> str:
        if col == F_SEVERITY:
            return f.severity
        if col == F_KIND:
            return f.kind
        if col == F_STEP:
            entered = self.steps[row][0]
            return "" if entered is None else str(entered)
        if col == F_TOKENS:
            return f"{f.tokens:,}"
        if col == F_SHARE:
            return f"{f.share * 100:.1f}%"
        if col == F_MESSAGE:
            return f.message
        return f.quoted_snippet()


# -- the heal's candidates --------------------------------------------------------------

CANDIDATE_COLUMNS = ("Repair", "Finding", "Fork at", "Estimate", "Status", "Tokens",
                     "Diverged at", "Check")
C_LABEL, C_FINDING, C_STEP, C_ESTIMATE, C_STATUS, C_TOKENS, C_DIVERGED, C_CHECK = range(8)
STATUS_COLORS = {"passed": "#2e7d32", "failed": "#c62828", "error": "#c62828",
                 "running": "#1565c0", "paused": "#ef6c00", "cancelled": "#757575",
                 "skipped": "#757575", "queued": "#555555"}


class CandidatesModel(QAbstractTableModel):
    """One row per planned repair, cheapest first; rows change in place as the heal reports."""

    def __init__(self, parent: Any = None, step_of: Any = None) -> None:
        super().__init__(parent)
        self.candidates: list[Any] = []
        self.step_of = step_of or (lambda seq: seq)  # log seq -> step-list number

    def set_candidates(self, candidates: Sequence[Any]) -> None:
        self.beginResetModel()
        self.candidates = list(candidates)
        self.endResetModel()

    def update(self, cand: Any) -> int:
        """Replace the row with ``cand``'s label by ``cand``; returns the row (-1: unknown)."""
        row = next((i for i, c in enumerate(self.candidates) if c.label == cand.label), -1)
        if row >= 0:
            self.candidates[row] = cand
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(CANDIDATE_COLUMNS) - 1))
        return row

    def row_of(self, label: str) -> int:
        return next((i for i, c in enumerate(self.candidates) if c.label == label), -1)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.candidates)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(CANDIDATE_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = _DISPLAY) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAY:
            return CANDIDATE_COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = _DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.candidates):
            return None
        c, col = self.candidates[index.row()], index.column()
        if role == _DISPLAY:
            return self._display(c, col)
        if role == Qt.ItemDataRole.ForegroundRole and col in (C_STATUS, C_CHECK):
            return QColor(STATUS_COLORS.get(c.status, "#555555"))
        if role == _ALIGN and col in (C_STEP, C_ESTIMATE, C_TOKENS, C_DIVERGED):
            return _RIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            return "\n".join(x for x in (c.message, c.error or "", c.path or "") if x)
        return None

    def _display(self, c: Any, col: int) -> str:
        if col == C_LABEL:
            return c.label
        if col == C_FINDING:
            return c.message
        if col == C_STEP:
            return f"step {self.step_of(c.step)}"
        if col == C_ESTIMATE:
            return f"~{c.estimate:,}"
        if col == C_STATUS:
            return c.status + (f" ({c.error})" if c.error and c.status in ("error", "skipped")
                               else "")
        if col == C_TOKENS:
            return f"{c.tokens:,}" if c.tokens else ""
        if col == C_DIVERGED:
            return "" if c.diverged_at is None else f"step {self.step_of(c.diverged_at)}"
        return {"passed": "✓ pass", "failed": "✗ fail"}.get(c.status, "—")
