"""Proxy ▸ Start…: where to forward, which port, what the shield does, where to save.

The rules preview runs the real shield engine (``loom_core.shield``) over a
handful of typical tool calls, so what the table says is what the proxy will do.
A rules problem (unknown profile, unreadable policy file, a sequence rule that does
not parse, a pattern with an unclosed bracket or an unknown ``cap:``) is named under
the table and Start is disabled until it is fixed: the proxy is never started on
rules the user did not mean. "Publish when it stops" is offered only when the window's
library is a team's that names a run store, else it is disabled with the reason. Each dialog starts from the last spec that was started
(or the defaults): a cancelled dialog leaves nothing behind. The trace is proposed in
the per-user runs folder (``loom_core.runs_dir``), where generated runs go, under a
name no run there has yet: not in whatever folder the app was started from.
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from loom_core.runs_dir import free_path, runs_dir, stem_of
from loom_desktop.dialogs import fit_size
from loom_desktop.features.proxy.info_dock import dialect_of
from loom_desktop.features.proxy.launcher import TARGETS, ProxySpec
from loom_desktop.features.proxy.rules_preview import preview, split_patterns

DEFAULTS = ["(not set: allow)", "allow", "confirm", "deny"]


def _next_free(save: str) -> str:
    """The last save path, or the next free name beside it once that run exists or is
    being recorded (its journal exists before its trace): a second recording must not
    propose to replace the first, nor to record into a proxy that is still running."""
    path = Path(save).expanduser()
    if not path.exists() and not path.with_name(stem_of(path) + ".journal.jsonl").exists():
        return save
    return str(free_path(path.parent, re.sub(r"-\d+$", "", stem_of(path)) or "session"))


class StartProxyDialog(QDialog):
    """Collects a :class:`ProxySpec`; :meth:`spec` reads it back."""

    def __init__(
        self,
        parent: QWidget | None = None,
        last: ProxySpec | None = None,
        library: str = "",
        blocker: str = "publishing needs a team library (Settings ▸ Library…)",
    ) -> None:
        """``library``: the team library a recording would be published to; ``blocker``:
        why it cannot be ("" when it can)."""
        super().__init__(parent)
        self.library = "" if blocker else library
        self.setWindowTitle("Start a proxy")
        form = QFormLayout()
        self.target = QComboBox()
        self.target.addItems([*TARGETS, "Custom URL"])
        self.custom = QLineEdit(placeholderText="http://127.0.0.1:9000 (without /v1)")
        self.custom.setEnabled(False)
        self.target.currentTextChanged.connect(lambda t: self.custom.setEnabled(t == "Custom URL"))
        form.addRow("Forward to", self.target)
        form.addRow("Custom URL", self.custom)
        self.port = QSpinBox(minimum=0, maximum=65535, value=0)
        self.port.setSpecialValueText("pick a free port")
        form.addRow("Port", self.port)
        self.profile = QComboBox()
        from loom_core.shield.profiles import profile_names

        self.profile.addItems(["(none)", *profile_names()])
        form.addRow("Profile", self.profile)
        self.deny = QLineEdit(placeholderText="e.g. Bash(*rm -rf*); Read(*.env*)")
        self.allow = QLineEdit(placeholderText="e.g. Read(*)")
        self.confirm = QLineEdit(placeholderText="e.g. deploy*; Bash(*git push*)")
        self.policy = QLineEdit(placeholderText="policy file (YAML or JSON), optional")
        form.addRow("Deny", self.deny)
        form.addRow("Allow", self.allow)
        form.addRow("Confirm (hold)", self.confirm)
        self.rules = QLineEdit(placeholderText="e.g. after Read(*.env*): deny WebFetch*")
        form.addRow("Sequence rules", self.rules)
        form.addRow("Policy file", self.policy)
        self.default = QComboBox()
        self.default.addItems(DEFAULTS)
        form.addRow("Default action", self.default)
        self.timeout = QDoubleSpinBox(minimum=1, maximum=86_400, value=300, suffix=" s")
        form.addRow("Approval timeout", self.timeout)
        save_row = QHBoxLayout()
        self.save = QLineEdit(str(free_path(runs_dir(), "session")))  # not the checkout
        self.replace_ok = ""  # the save path the user agreed to replace
        self.confirm_box: QMessageBox | None = None
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        save_row.addWidget(self.save, 1)
        save_row.addWidget(browse)
        form.addRow("Save trace to", save_row)
        self.otlp = QLineEdit(placeholderText="e.g. http://127.0.0.1:4318 (optional)")
        self.otlp_content = QCheckBox("with message content")
        otlp_row = QHBoxLayout()
        otlp_row.addWidget(self.otlp, 1)
        otlp_row.addWidget(self.otlp_content)
        form.addRow("Also send spans to", otlp_row)  # --otlp-endpoint: a team's OTel backend
        self.publish = QCheckBox("Publish the trace to the team library")
        self.publish.setEnabled(not blocker)
        self.publish.setToolTip(blocker or f"once the proxy stopped: {library}")
        self.publish_why = QLabel(blocker)
        self.publish_why.setStyleSheet("color: palette(mid);")
        publish_row = QHBoxLayout()
        publish_row.addWidget(self.publish)
        publish_row.addWidget(self.publish_why, 1)
        form.addRow("When it stops", publish_row)  # as the CLI's proxy --publish
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Sample call", "Action", "Decided by", "Rule"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #c62828;")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.start_btn = buttons.addButton("Start", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(QLabel("What these rules would do:"))
        lay.addWidget(self.table, 1)
        lay.addWidget(self.problem)
        lay.addWidget(buttons)
        if last is not None:
            self._fill(last)
        for w in (self.deny, self.allow, self.confirm, self.rules, self.policy, self.otlp):
            w.textChanged.connect(self.update_preview)
        for c in (self.profile, self.default):
            c.currentIndexChanged.connect(self.update_preview)
        fit_size(self, 640, 720)
        self.update_preview()

    def _fill(self, spec: ProxySpec) -> None:
        """Start from a spec that was started before (what the user accepted, nothing else)."""
        name = next((n for n, url in TARGETS.items() if url == spec.target), "Custom URL")
        self.target.setCurrentText(name)
        self.custom.setText(spec.target if name == "Custom URL" else "")
        self.port.setValue(spec.port)
        self.profile.setCurrentText(spec.profiles[0] if spec.profiles else "(none)")
        for line, values in (
            (self.deny, spec.deny),
            (self.allow, spec.allow),
            (self.confirm, spec.confirm),
            (self.rules, spec.rules),
            (self.policy, spec.policies[:1]),
        ):
            line.setText("; ".join(values))
        self.default.setCurrentText(spec.default or DEFAULTS[0])
        self.timeout.setValue(spec.confirm_timeout)
        self.save.setText(_next_free(spec.save))
        self.otlp.setText(spec.otlp_endpoint)
        self.otlp_content.setChecked(spec.otlp_content)
        self.publish.setChecked(bool(spec.publish) and self.publish.isEnabled())

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save trace to", self.save.text(), "Loom traces (*.loom.json);;All files (*)"
        )
        if path:  # the file dialog asked before choosing an existing file: that is a yes
            self.save.setText(path)
            self.replace_ok = path

    def accept(self) -> None:
        """Start only rules that make sense (Enter reaches here even with Start disabled), and
        replace an existing trace at the save path only once the user confirmed it."""
        if self.update_preview():
            return
        path = self.spec().save
        if self.replace_ok == path or not Path(path).expanduser().exists():
            super().accept()
            return
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Replace the trace?",
            f"{path} already exists.\n\nA new recording would replace it. "
            "Replace it, or choose another file?",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.addButton("Replace", QMessageBox.ButtonRole.DestructiveRole)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(
            lambda b: (
                self._replace(path)
                if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole
                else None
            )
        )
        self.confirm_box = box
        box.open()

    def _replace(self, path: str) -> None:
        self.replace_ok = path
        self.accept()

    def spec(self) -> ProxySpec:
        choice = self.target.currentText()
        target = (
            self.custom.text().strip().rstrip("/") if choice == "Custom URL" else TARGETS[choice]
        )
        default = self.default.currentText()
        profile = self.profile.currentText()
        save = self.save.text().strip() or "session.loom.json"
        return ProxySpec(
            target=target,
            save=save,
            port=self.port.value(),
            profiles=[] if profile == "(none)" else [profile],
            policies=[self.policy.text().strip()] if self.policy.text().strip() else [],
            deny=split_patterns(self.deny.text()),
            allow=split_patterns(self.allow.text()),
            confirm=split_patterns(self.confirm.text()),
            rules=split_patterns(self.rules.text()),
            default=None if default.startswith("(") else default,
            confirm_timeout=self.timeout.value(),
            force=self.replace_ok == save,
            dialect=dialect_of(target),  # a custom upstream that names neither: both lines
            otlp_endpoint=self.otlp.text().strip(),
            otlp_content=self.otlp_content.isChecked(),
            publish=self.library if self.publish.isChecked() else "",
        )

    def update_preview(self) -> str:
        """Refresh the table; returns the problem shown ("" when the rules are fine)."""
        rows, problem = preview(self.spec())
        self.problem.setText(problem)
        self.start_btn.setEnabled(not problem)
        self.start_btn.setToolTip(problem)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        return problem
