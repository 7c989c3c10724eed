"""The Qt models of the doctor and heal: a checkup's findings, and a heal's candidate repairs.

Adapters only: the rows are the core's frozen ``Finding`` objects (and the heal's
``Candidate`` snapshots), never copies of trace data. What the views need besides
them -- the row where each finding sits in the step list and the row clicking it
should jump to -- is computed once per checkup by :func:`locate`: a finding names
steps by ``seq`` (as the panel shows them), and user prompts are rows of the list too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from loom_core.views.steps import PROMPT_LABEL, step_of_seq
from loom_desktop.style import severity_color

FindingRole = Qt.ItemDataRole.UserRole + 1
JumpRole = Qt.ItemDataRole.UserRole + 2
_Index = QModelIndex | QPersistentModelIndex
_DISPLAY, _ALIGN = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


# -- where a finding is ------------------------------------------------------------------


def _row(tl: Any, seq: int | None) -> int | None:
    return None if seq is None or tl is None else step_of_seq(tl, seq)


def locate(finding: Any, doc: Any, tl: Any) -> tuple[int | None, int | None]:
    """(the row where the item entered, the row to jump to: the first model step that saw it)."""
    entered = None
    if finding.effect is None and finding.episode is not None and tl is not None:
        try:
            entered = tl.episode_of.index(finding.episode)
        except ValueError:
            entered = None
    if entered is None:
        entered = _row(tl, finding.step)
    jump = _row(tl, finding.model_step)
    return entered, entered if jump is None else jump


def marked_effect(finding: Any, doc: Any, tl: Any) -> int | None:
    """The effect whose message the context view marks for ``finding``: its own, except for
    a finding about a model call (context bloat), whose own reply is not in the context it
    saw -- then the item it names (its first redact target), so there is something to show."""
    effect = finding.effect
    if effect is None or doc is None or not 0 <= effect < len(doc.effects):
        return effect
    if doc.effects[effect].kind != "model" or not finding.redact_targets:
        return effect
    row = _row(tl, finding.redact_targets[0])
    return effect if row is None or tl.effect_of[row] < 0 else int(tl.effect_of[row])


_QCOLORS: dict[str, QColor] = {}  # one per severity: views ask on every paint


# -- the findings -----------------------------------------------------------------------

FINDING_COLUMNS = ("Severity", "Kind", "Step", "Seen at", "Tokens", "Share", "Finding", "Snippet")
F_SEVERITY, F_KIND, F_STEP, F_SEEN, F_TOKENS, F_SHARE, F_MESSAGE, F_SNIPPET = range(8)
HEADER_TIPS = {
    F_STEP: "the step where the item entered the context",
    F_SEEN: "the first model call that saw the item: clicking a finding goes there",
}


class FindingsModel(QAbstractTableModel):
    """One row per finding of the current tab's checkup, in its order (loom doctor's kinds
    first, in loom doctor's order; ours after, by step)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.findings: tuple[Any, ...] = ()
        self.steps: list[tuple[int | None, int | None]] = []  # (entered, jump) per finding

    def set_findings(
        self, findings: Sequence[Any], steps: Sequence[tuple[int | None, int | None]]
    ) -> None:
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

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,  # noqa: N802
        role: int = _DISPLAY,
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAY:
            return FINDING_COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS.get(section)
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
        if role == _ALIGN and col in (F_STEP, F_SEEN, F_TOKENS, F_SHARE):
            return _RIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{f.text}\n{f.quoted_snippet()}\n{seen_text(f)}"
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
        if col == F_STEP:  # the seq, as the finding's text names it; a prompt is not a step
            if f.effect is None and f.episode is not None:
                return PROMPT_LABEL
            return "" if f.step is None else str(f.step)
        if col == F_SEEN:
            return "" if f.model_step is None else str(f.model_step)
        if col == F_TOKENS:
            return f"{f.tokens:,}"
        if col == F_SHARE:
            return f"{f.share * 100:.1f}%"
        if col == F_MESSAGE:
            return f.text
        return f.quoted_snippet()


def seen_text(f: Any) -> str:
    """Why a click on the finding selects another step than its own, in words."""
    if f.model_step is None:
        return "no model call saw it"
    return f"first seen by the model call at step {f.model_step} (a click goes there)"


# -- the heal's candidates --------------------------------------------------------------

CANDIDATE_COLUMNS = (
    "Repair",
    "Finding",
    "Fork at",
    "Estimate",
    "Status",
    "Tokens",
    "Diverged at",
    "Check",
)
C_LABEL, C_FINDING, C_STEP, C_ESTIMATE, C_STATUS, C_TOKENS, C_DIVERGED, C_CHECK = range(8)
STATUS_COLORS = {
    "passed": "#2e7d32",
    "failed": "#c62828",
    "error": "#c62828",
    "running": "#1565c0",
    "paused": "#ef6c00",
    "cancelled": "#757575",
    "skipped": "#757575",
    "queued": "#555555",
}


class CandidatesModel(QAbstractTableModel):
    """One row per planned repair, cheapest first; rows change in place as the heal reports."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.candidates: list[Any] = []

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

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,  # noqa: N802
        role: int = _DISPLAY,
    ) -> Any:
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
            return f"step {c.step}"
        if col == C_ESTIMATE:
            return f"~{c.estimate:,}"
        if col == C_STATUS:
            return c.status + (
                f" ({c.error})"
                if c.error and c.status in ("error", "skipped", "failed", "paused")
                else ""
            )
        if col == C_TOKENS:
            return f"{c.tokens:,}" if c.tokens else ""
        if col == C_DIVERGED:
            return "" if c.diverged_at is None else f"step {c.diverged_at}"
        return {"passed": "✓ pass", "failed": "✗ fail"}.get(c.status, "—")
