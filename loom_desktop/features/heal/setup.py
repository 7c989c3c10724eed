"""The heal dialog's left side: the check the healed output must pass, and the budget.

Why the check is validated as typed: a bad regex or an unimportable
``module:function`` would otherwise only fail after tokens were spent; the core's
:class:`CheckError`'s plain words are shown under the fields, and the dialog keeps Start
disabled while there is none. The budget reuses the fork dialog's run settings
(provider, model, limits, agent mode) so a repair runs like any fork of the run.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from loom_core.heal.checks import CheckError, build_check
from loom_core.heal.engine import HealOptions
from loom_desktop.features.fork.settings import BAD_STYLE, OK_STYLE, RunSettings

_FIELDS = (
    ("forbid", "text the output must not contain"),
    ("require", "text the output must contain"),
    ("regex", "a regular expression the output must match"),
    ("function", "module:function returning true for a good output"),
)
# the rows finish the group's sentence "the healed run's final output must…"
_ROWS = {
    "forbid": "Not contain",
    "require": "Contain",
    "regex": "Match (regex)",
    "function": "Pass (function)",
}


class CheckForm(QGroupBox):
    """The four check fields and a line saying what passes (or why there is no check)."""

    edited = Signal()  # any field changed (the dialog debounces, then calls validate)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Check: the healed run's final output must…", parent)
        self.fields = {k: QLineEdit(placeholderText=p) for k, p in _FIELDS}
        self.label = QLabel(wordWrap=True)
        self.check: Any = None
        form = QFormLayout(self)
        for key, edit in self.fields.items():
            form.addRow(_ROWS[key], edit)
            edit.textChanged.connect(lambda _t: self.edited.emit())
        form.addRow("", self.label)

    def validate(self) -> Any:
        """Build the check from the fields (None, with CheckError's words shown, when bad)."""
        text = {k: e.text().strip() for k, e in self.fields.items()}
        try:
            self.check = build_check(*([text[k]] if text[k] else [] for k, _ in _FIELDS))
        except CheckError as err:
            self.check = None
            self.label.setText(f"✗ {err.plain}")  # plain words: the fields are not options
            self.label.setStyleSheet(BAD_STYLE)
        else:
            self.label.setText(f"✓ passes when the {self.check.label}")
            self.label.setStyleSheet(OK_STYLE)
        return self.check


class BudgetBox(QGroupBox):
    """How many repairs, how many at once, and the run settings (without a reason: heal
    writes its own per repair)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Budget and run", parent)
        self.max_candidates = QSpinBox(minimum=1, maximum=100, value=5)
        self.concurrency = QSpinBox(minimum=1, maximum=16, value=1)
        self.settings = RunSettings()
        self.settings.reason.setVisible(False)
        outer = self.settings.layout()
        first = outer.itemAt(0) if outer is not None else None
        form = first.layout() if first is not None else None
        if isinstance(form, QFormLayout):
            form.setRowVisible(self.settings.reason, False)
        counts = QFormLayout()
        counts.addRow("Max candidates", self.max_candidates)
        counts.addRow("Concurrency", self.concurrency)
        lay = QVBoxLayout(self)
        lay.addLayout(counts)
        lay.addWidget(self.settings)

    def options(self) -> HealOptions:
        s = self.settings
        return HealOptions(
            s.max_turns.value(),
            self.max_candidates.value(),
            s.budget_tokens(),
            self.concurrency.value(),
            s.mode(),
        )
