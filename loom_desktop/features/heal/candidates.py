"""The heal dialog's right side: the planned repairs as a live table, and how the heal ended.

Why apart from the dialog: the table is fed from two places (the plan before Start,
then each candidate's snapshot while the heal runs) and the outcome has its own
words per status; the dialog only decides *when* (buttons, runner, winner tab).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from loom_desktop.features.doctor.findings_model import CandidatesModel
from loom_desktop.features.fork.settings import BAD_STYLE, OK_STYLE

# the status column is wide and rows grow to fit it: "skipped (token budget: …)" says why
_WIDTHS = ((0, 150), (2, 62), (3, 70), (4, 190), (5, 55), (6, 80), (7, 58))


def result_text(result: Any, path: str) -> str:
    """The heal's outcome in one line."""
    name = Path(path).name
    if result.status == "already_passes":
        return f"{name} already passes ({result.check}): nothing to heal"
    if result.status == "healed":
        return f"Healed by {result.winner.label}: {result.winner.path}"
    if result.status == "no_repairs":
        return f"No repair to try: the checkup found nothing to redact in {name}"
    if result.status == "cancelled":
        return f"Cancelled; {result.tokens:,} tokens spent"
    return f"No repair passed ({result.check}); {result.tokens:,} tokens spent"


class HealCandidates(QWidget):
    """The candidate repairs (cheapest first), the plan's line above, the outcome below."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = CandidatesModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(True)  # a status's reason and a finding are read whole
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )  # few rows: cheap
        for col, width in _WIDTHS:
            self.table.setColumnWidth(col, width)
        self.plan_label = QLabel("Planning: checking the context…", wordWrap=True)
        self.planned = "No repair planned"  # the plan's counts, kept for the outcome's words
        self.result_label = QLabel(wordWrap=True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel("<b>Candidate repairs</b> (cheapest first)"))
        lay.addWidget(self.plan_label)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.result_label)

    # -- before Start ------------------------------------------------------------------
    def show_planning(self) -> None:
        self.plan_label.setText("Planning: estimating each repair (nothing is spent)…")

    def show_plan(self, plan: Any) -> None:
        self.model.set_candidates(plan.candidates)
        self.planned = (
            f"{len(plan.candidates)} repair(s) planned from {len(plan.findings)} finding(s)"
        )
        self.plan_label.setText(
            f"{self.planned}. Nothing is spent before Start."
            if plan.candidates
            else "No repair to try: the checkup found nothing to redact."
        )

    def show_problem(self, cause: str) -> None:
        """Planning (or starting, or saving) failed: the cause where the plan's line is."""
        self.plan_label.setText(f"✗ {cause}")

    # -- the run -----------------------------------------------------------------------
    def show_running(self, candidates: Sequence[Any], out_dir: str) -> None:
        """Every planned row back to queued; where the branches go."""
        self.model.set_candidates(candidates)
        self.plan_label.setText(f"{self.planned}.")  # not what an earlier run ended with
        self._result(f"Running… branches go to {out_dir}", "")

    def show_cancelling(self) -> None:
        self.result_label.setText("Cancelling…")

    def show_result(self, result: Any, path: str) -> None:
        """The final rows and the outcome's line (green when healed or nothing to heal)."""
        if result.status == "already_passes":
            self.model.set_candidates([])  # nothing was tried: the plan's rows would say queued
            self.plan_label.setText(f"{self.planned}; none was tried: the run already passes.")
        for cand in result.candidates:
            self.model.update(cand)
        ok = result.status in ("healed", "already_passes")
        self._result(result_text(result, path), OK_STYLE if ok else BAD_STYLE)

    def show_failure(self, message: str) -> None:
        self._result(f"✗ {message}", BAD_STYLE)

    def show_saved(self, saved: str) -> None:
        self.result_label.setText(self.result_label.text() + f"\nRegression trace: {saved}")

    def _result(self, text: str, style: str) -> None:
        self.result_label.setText(text)
        self.result_label.setStyleSheet(style)
