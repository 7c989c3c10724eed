"""The fork dialog's run settings: provider, model, limits, reason, mode; and the estimate's words.

Why the availability line is computed, not guessed: whether a provider can run
depends on the environment (an API key variable) and on the base URL field, and the
user must see which before anything is spent -- but never the key itself.
"""

from __future__ import annotations

import shlex
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from loom_core.providers import DEFAULT_MODELS, PROVIDERS
from loom_core.runs_dir import runs_dir
from loom_core.views.pricing import OFFLINE_TEXT, format_usd

OK_STYLE, BAD_STYLE = "color: #2e7d32;", "color: #c62828; font-weight: bold;"
WARN_STYLE = "color: #8d2f00; background: #fff3e0; padding: 6px; border: 1px solid #ffb74d;"


def availability(provider: Any) -> tuple[bool, str]:
    """(usable?, a line saying why) for a provider object, naming the key variable only."""
    ok, why = provider.available()
    if not ok:
        return False, why
    endpoint = getattr(provider, "endpoint", None)
    if endpoint is None:
        return True, "offline: no API key and no network needed"
    if endpoint.api_key:
        where = f" · {endpoint.base_url}" if endpoint.base_url else ""
        return True, f"{endpoint.key_var} found{where}"
    return True, f"no {endpoint.key_var}: {endpoint.base_url} is called without a key"


def plan_text(plan: Any, budget: int | None = None) -> str:
    """The dry run in a few lines (free prefix, expected live calls, tokens, cost)."""
    cost = (
        OFFLINE_TEXT
        if plan.offline
        else "unknown (the model is not in the price table)"
        if plan.cost_usd is None
        else f"~{format_usd(plan.cost_usd) or '$0'}"
    )
    where = "the recorded request" if plan.source == "request" else "reconstructed from the log"
    lines = [
        f"Replays free: {plan.replayed} step(s) before the fork point",
        f"Runs live: ~{plan.live_calls} model call(s) (max {plan.max_turns})",
        f"Tokens: ~{plan.total_tokens:,} ({plan.input_tokens:,} in / "
        f"{plan.output_tokens:,} out)" + (f", capped at {budget:,}" if budget else ""),
        f"Cost: {cost} on {plan.model or 'the provider default'}",
        f"Context at the fork step: ~{plan.context_tokens:,} tokens ({where})",
    ]
    return "\n".join(lines)


class RunSettings(QWidget):
    """Form of everything a run needs besides the edit; ``changed`` on any change."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.recorded_model = self.guessed = ""
        self.provider = QComboBox()
        for name, label in PROVIDERS.items():
            self.provider.addItem(label, name)
            self.provider.setItemData(self.provider.count() - 1, label, 3)  # tooltip
        self.provider.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.provider.setMinimumContentsLength(28)
        self.base_url = QLineEdit(placeholderText="default endpoint (or the *_BASE_URL variable)")
        self.available = QLabel(wordWrap=True)
        self.model = QComboBox(editable=True)
        self.max_turns = QSpinBox(minimum=1, maximum=1000, value=20)
        self.budget = QSpinBox(minimum=0, maximum=100_000_000, singleStep=1000, value=0)
        self.budget.setSpecialValueText("no limit")
        self.reason = QLineEdit(placeholderText="why this fork (kept in the branch)")
        self.folder = QLineEdit(placeholderText=f"{runs_dir()} (the per-user runs folder)")
        self.folder.setToolTip(
            "Where new runs are written; empty: the per-user runs folder "
            "(never beside the run they come from)"
        )
        self.folder_btn = QPushButton("Choose…")
        self.folder_btn.clicked.connect(self._choose_folder)
        self.model_mode = QRadioButton("Model re-run")
        self.model_mode.setChecked(True)
        self.model_mode.setToolTip(
            "Resend the edited context to a model; recorded tool "
            "results are reused, new calls pause for you"
        )
        self.agent_mode = QRadioButton("Agent re-run")
        self.modes = QButtonGroup(self)
        self.modes.addButton(self.model_mode)
        self.modes.addButton(self.agent_mode)
        self.agent_note = QLabel(wordWrap=True)
        self.agent_note.setVisible(False)
        self.agent_note.setStyleSheet(WARN_STYLE)
        self.workspace: tuple[list[str], str] | None = None
        self._layout()
        self.provider.currentIndexChanged.connect(self._provider_changed)
        for signal in (
            self.base_url.textChanged,
            self.model.currentTextChanged,
            self.max_turns.valueChanged,
            self.budget.valueChanged,
        ):
            signal.connect(lambda *_: self.changed.emit())
        self.agent_mode.toggled.connect(self._mode_changed)

    def _layout(self) -> None:
        form = QFormLayout()
        form.addRow("Provider", self.provider)
        form.addRow("Base URL", self.base_url)
        form.addRow("", self.available)
        form.addRow("Model", self.model)
        form.addRow("Max turns", self.max_turns)
        form.addRow("Token budget", self.budget)
        form.addRow("Reason", self.reason)
        where = QHBoxLayout()
        where.addWidget(self.folder, 1)
        where.addWidget(self.folder_btn)
        form.addRow("Save in", where)
        modes = QHBoxLayout()
        modes.addWidget(self.model_mode)
        modes.addWidget(self.agent_mode)
        modes.addStretch(1)
        form.addRow("Mode", modes)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(form)
        outer.addWidget(self.agent_note)

    def folder_text(self) -> str:
        """The folder the user chose for new runs ("" = the per-user runs folder)."""
        return self.folder.text().strip()

    def _choose_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(
            self, "Save new runs in", self.folder_text() or str(runs_dir())
        )
        if chosen:
            self.folder.setText(chosen)

    # -- filling ---------------------------------------------------------------------------
    def set_context(
        self,
        recorded_model: str,
        provider: str,
        workspace: tuple[list[str], str] | None,
        why_no_agent: str,
    ) -> None:
        """Prefill from the fork point: the provider that speaks like the parent, its model."""
        self.recorded_model, self.guessed = recorded_model, provider
        self.workspace = workspace
        self.agent_mode.setEnabled(workspace is not None)
        self.agent_mode.setToolTip(
            "Run the recorded command again against a fork proxy: its tools run for real"
            if workspace is not None
            else why_no_agent
        )
        index = self.provider.findData(provider)
        self.provider.setCurrentIndex(max(index, 0))
        self._provider_changed()

    def _provider_changed(self, *_: Any) -> None:
        """The recorded model for the provider that speaks like the parent (and the
        offline one, which answers any model); else that provider's default model."""
        name = self.provider_name()
        default = DEFAULT_MODELS.get(name, "")
        speaks = bool(self.recorded_model) and name in (self.guessed, "scripted")
        choices = [m for m in (self.recorded_model, default) if m]
        self.model.blockSignals(True)
        self.model.clear()
        self.model.addItems(list(dict.fromkeys(choices)))
        self.model.setCurrentText(self.recorded_model if speaks else default)
        self.model.blockSignals(False)
        self.changed.emit()

    def _mode_changed(self, agent: bool) -> None:
        if agent and self.workspace is not None:
            argv, cwd = self.workspace
            self.agent_note.setText(
                "<b>Agent re-run: the agent's command will really run, with its tools.</b><br>"
                f"Command: <code>{_html(shlex.join(argv))}</code><br>"
                f"In: <code>{_html(cwd)}</code><br>Its tools act for real (files, network, "
                "anything it can do); the world is not rewound. The calls before the fork "
                "point are answered from the recording; you will be asked to confirm."
            )
        self.agent_note.setVisible(agent)
        for w in (self.provider, self.base_url, self.model, self.max_turns, self.budget):
            w.setEnabled(not agent)
        self.changed.emit()

    def confirm_agent(self, lead: str, question: str) -> bool:
        """Ask before really running the recorded command: its tools act for real. ``lead``
        says how it runs ("Each repair runs..."), ``question`` what Yes starts."""
        argv, cwd = self.workspace or ([], "")
        answer = QMessageBox.question(
            self.window(),
            "Run the agent again?",
            f"{lead}, with its tools:\n\n  {shlex.join(argv)}\n  in {cwd}\n\n"
            f"Its tools act for real (files, network); nothing is rewound. {question}",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def set_availability(self, ok: bool, text: str) -> None:
        self.available.setText(("✓ " if ok else "✗ ") + text)
        self.available.setStyleSheet(OK_STYLE if ok else BAD_STYLE)

    # -- reading ---------------------------------------------------------------------------
    def provider_name(self) -> str:
        return str(self.provider.currentData() or "scripted")

    def base_url_text(self) -> str | None:
        return self.base_url.text().strip() or None

    def model_text(self) -> str:
        return self.model.currentText().strip()

    def budget_tokens(self) -> int | None:
        return self.budget.value() or None

    def mode(self) -> str:
        return "agent" if self.agent_mode.isChecked() else "model"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
