"""Heal…: define the check, see the planned repairs, run them, keep the winner.

Why the plan comes first: each repair is a fork that spends tokens, so the dialog
lists the candidates (which finding, where it forks, the dry-run estimate,
cheapest first) before Start. The check is validated as it is typed (a bad regex
or an unimportable ``module:function`` says why and keeps Start disabled). The
run belongs to the dialog (:class:`~.heal_runner.HealRunner`): Cancel stops it,
closing the dialog cancels it and waits, bounded. A winner opens as a branch tab
with a compare tab against the original, and can be saved as a regression trace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import (QDialog, QFormLayout, QGroupBox, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QMessageBox, QPushButton,
                               QSpinBox, QTableView, QVBoxLayout, QWidget)

from loom_core.heal.checks import CheckError, build_check
from loom_core.heal.engine import HealOptions, save_regression

from . import heal_runner
from .heal_runner import HealJob, HealPlan, HealRunner, out_dir_for, plan_heal, probe, result_text
from .models.findings_model import CandidatesModel, gui_step
from .widgets.fork_settings import BAD_STYLE, OK_STYLE, RunSettings
from .workers import Task

DEBOUNCE_MS = 250
CLOSE_WAIT_S = 15.0


class HealDialog(QDialog):
    """Non-modal; one heal of ``view``'s run at a time (the window's doctor owns the workers)."""

    def __init__(self, window: Any, view: Any, findings: Any = None,
                 owner: QObject | None = None) -> None:
        super().__init__(window)
        self.window_, self.view = window, view
        self.path, self.doc = view.path, view.doc
        self.findings = findings
        self.plan: HealPlan | None = None
        self.check: Any = None
        self.provider_ok = False
        self.runner: HealRunner | None = None
        self.result: Any = None
        self.setWindowTitle(f"Heal {Path(self.path).name}")
        self.resize(1180, 660)
        self._build()
        self._plan_task = Task(owner or self)
        self._plan_task.finished.connect(self._on_plan)
        self._plan_task.failed.connect(lambda exc: self._fail("Cannot plan the heal", exc))
        self._probe_task = Task(owner or self)
        self._probe_task.finished.connect(self._on_probe)
        self._probe_task.failed.connect(lambda exc: self._on_probe((False, str(exc))))
        self._timers = {name: QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
                        for name in ("check", "plan", "probe")}
        self._timers["check"].timeout.connect(self.validate)
        self._timers["plan"].timeout.connect(self.replan)
        self._timers["probe"].timeout.connect(self._probe)
        self._wire()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        self.header = QLabel(wordWrap=True, text=(
            f"<b>Heal {Path(self.path).name}</b>: each repair redacts one item the doctor "
            "flagged and re-runs the run from the first model step that saw it; the "
            "first-ranked branch whose output passes the check wins."))
        self.fields = {k: QLineEdit(placeholderText=p) for k, p in (
            ("forbid", "text the output must not contain"),
            ("require", "text the output must contain"),
            ("regex", "a regular expression the output must match"),
            ("function", "module:function returning true for a good output"))}
        self.check_label = QLabel(wordWrap=True)
        self.max_candidates = QSpinBox(minimum=1, maximum=100, value=5)
        self.concurrency = QSpinBox(minimum=1, maximum=16, value=1)
        self.settings = RunSettings()
        self.settings.reason.setVisible(False)  # heal writes its own reason per repair
        form = self.settings.layout().itemAt(0).layout()
        if isinstance(form, QFormLayout):
            form.setRowVisible(self.settings.reason, False)
        self.model = CandidatesModel(self, lambda seq: gui_step(self.doc, self._timeline(), seq))
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for col, width in ((0, 150), (2, 62), (3, 70), (4, 80), (5, 55), (6, 80), (7, 58)):
            self.table.setColumnWidth(col, width)
        self.plan_label = QLabel("Planning: checking the context…", wordWrap=True)
        self.result_label = QLabel(wordWrap=True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.start_btn = QPushButton("Start", enabled=False, default=True)
        self.cancel_btn = QPushButton("Cancel run", enabled=False)
        self.save_btn = QPushButton("Save as regression trace…", enabled=False)
        self.close_btn = QPushButton("Close")
        self._place()

    def _place(self) -> None:
        check = _form(QGroupBox("Check: the healed run's final output must…"), [
            (k.capitalize(), e) for k, e in self.fields.items()] + [("", self.check_label)])
        budget = QGroupBox("Budget and run")
        QVBoxLayout(budget).addLayout(_form(None, [("Max candidates", self.max_candidates),
                                                   ("Concurrency", self.concurrency)]))
        budget.layout().addWidget(self.settings)
        left = _column([check, budget, 1])
        right = _column([QLabel("<b>Candidate repairs</b> (cheapest first)"), self.plan_label,
                         (self.table, 1), self.result_label])
        body = QHBoxLayout()
        body.addLayout(left, 4)
        body.addLayout(right, 7)
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_btn)
        buttons.addStretch(1)
        for b in (self.start_btn, self.cancel_btn, self.close_btn):
            buttons.addWidget(b)
        _column([self.header, (body, 1), buttons], self)

    def _wire(self) -> None:
        for edit in self.fields.values():
            edit.textChanged.connect(lambda _t: self._debounce("check"))
        self.max_candidates.valueChanged.connect(lambda _v: self._debounce("plan"))
        self.settings.max_turns.valueChanged.connect(lambda _v: self._debounce("plan"))
        self.settings.changed.connect(lambda: self._debounce("probe"))
        self.start_btn.clicked.connect(self.start)
        self.cancel_btn.clicked.connect(self.cancel_run)
        self.save_btn.clicked.connect(self.save_regression)
        self.close_btn.clicked.connect(self.close)

    def load(self) -> None:
        """Start planning (in a worker) and show what the empty check lacks."""
        self.validate()
        self.replan()

    def _timeline(self) -> Any:
        return getattr(getattr(self.view, "session", None), "timeline", None)

    def _debounce(self, name: str) -> None:
        self.start_btn.setEnabled(False)
        self._timers[name].start()

    # -- the check, the plan, the provider ----------------------------------------------
    def validate(self) -> bool:
        """Build the check from the fields; its error (CheckError's words) is shown below them."""
        text = {k: e.text().strip() for k, e in self.fields.items()}
        try:
            self.check = build_check(*([text[k]] if text[k] else [] for k in
                                       ("forbid", "require", "regex", "function")))
        except CheckError as err:
            self.check = None
            self.check_label.setText(f"✗ {err}")
            self.check_label.setStyleSheet(BAD_STYLE)
        else:
            self.check_label.setText(f"✓ passes when the {self.check.label}")
            self.check_label.setStyleSheet(OK_STYLE)
        self._update_buttons()
        return self.check is not None

    def replan(self) -> None:
        doc, path, findings = self.doc, self.path, self.findings
        options = self.options()
        self.plan_label.setText("Planning: estimating each repair (nothing is spent)…")
        self._plan_task.start(lambda _c: plan_heal(doc, path, findings, options))

    def _on_plan(self, plan: HealPlan) -> None:
        first = self.plan is None
        self.plan, self.findings = plan, plan.findings
        self.model.set_candidates(plan.candidates)
        self.plan_label.setText(
            f"{len(plan.candidates)} repair(s) planned from {len(plan.findings)} finding(s). "
            "Nothing is spent before Start." if plan.candidates else
            "No repair to try: the checkup found nothing to redact.")
        if first:
            # prefilled like a fork of this run; its ``changed`` schedules the provider probe
            self.settings.set_context(plan.recorded_model, plan.provider, plan.workspace,
                                      plan.why_no_agent)
        self._update_buttons()

    def _probe(self) -> None:
        args = (self.settings.provider_name(), self.settings.model_text(),
                self.settings.base_url_text())
        self._probe_task.start(lambda _c: probe(*args))

    def _on_probe(self, found: tuple[bool, str]) -> None:
        self.provider_ok = found[0]
        self.settings.set_availability(*found)
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self.runner is not None and not self.runner.ended
        usable = self.settings.mode() == "agent" or self.provider_ok
        self.start_btn.setEnabled(not running and self.plan is not None
                                  and self.check is not None and usable
                                  and not any(t.isActive() for t in self._timers.values()))
        self.cancel_btn.setEnabled(running)
        self.save_btn.setEnabled(not running and self.result is not None
                                 and self.result.winner is not None)

    def options(self) -> HealOptions:
        s = self.settings
        return HealOptions(s.max_turns.value(), self.max_candidates.value(), s.budget_tokens(),
                           self.concurrency.value(), s.mode())

    # -- running ------------------------------------------------------------------------
    def start(self) -> None:
        if self.plan is None or not self.validate():
            return
        if self.settings.mode() == "agent" and not self.settings.confirm_agent(
                "Each repair runs the agent's command again, for real", "Start the heal?"):
            return
        s = self.settings
        try:
            out_dir = str(out_dir_for(self.path))
        except OSError as err:
            self._fail("Cannot start the heal", err)
            return
        job = HealJob(self.doc, self.path, self.check, self.plan.findings, self.plan.candidates,
                      out_dir, self.options(), s.provider_name(), s.model_text(),
                      s.base_url_text())
        self.result = None
        self.model.set_candidates(self.plan.candidates)
        self.runner = HealRunner(job, self)
        self.runner.updated.connect(self.model.update)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.result_label.setStyleSheet("")
        self.result_label.setText(f"Running… branches go to {out_dir}")
        self.runner.start()
        self._update_buttons()

    def cancel_run(self) -> None:
        if self.runner is not None and not self.runner.ended:
            self.result_label.setText("Cancelling…")
            self.runner.cancel()

    def _on_finished(self, result: Any) -> None:
        self.result = result
        if result.status == "already_passes":
            self.model.set_candidates([])  # nothing was tried: the plan's rows would say queued
        for cand in result.candidates:
            self.model.update(cand)
        self.result_label.setText(result_text(result, self.path))
        ok = result.status in ("healed", "already_passes")
        self.result_label.setStyleSheet(OK_STYLE if ok else BAD_STYLE)
        self._update_buttons()
        if result.winner is not None:
            self.open_winner(str(result.winner.path))

    def _on_failed(self, message: str) -> None:
        self.result_label.setText(f"✗ {message}")
        self.result_label.setStyleSheet(BAD_STYLE)
        self._update_buttons()
        self._report("Heal failed", f"Cannot heal {self.path}\n\n{message}")

    def open_winner(self, path: str) -> None:
        """The winner as a branch tab, and a compare tab against the original."""
        window = self.window_
        window.open_path(path)
        original = self.view if self.view in window.documents() else self.path
        window.open_compare(original, path)

    def save_regression(self) -> str | None:
        """Save the winner as ``healed-<hash>.loom.json`` in a directory the user picks."""
        if self.result is None or self.result.winner is None:
            return None
        folder = heal_runner.pick_directory(self, str(Path(self.path).parent))
        if not folder:
            return None
        winner = str(self.result.winner.path)
        try:
            data = json.loads(Path(winner).read_text(encoding="utf-8"))
            saved = save_regression(data, folder)
        except (OSError, ValueError) as err:
            self._fail("Cannot save the regression trace", err, winner)
            return None
        self.result_label.setText(self.result_label.text() + f"\nRegression trace: {saved}")
        return saved

    # -- errors and closing ----------------------------------------------------------------
    def _fail(self, title: str, exc: object, path: str | None = None) -> None:
        from loom_core.errors import LoadError

        cause = exc.cause if isinstance(exc, LoadError) else f"{type(exc).__name__}: {exc}"
        self.plan_label.setText(f"✗ {cause}")
        self._report(title, f"{title}: {path or self.path}\n\n{cause}")

    def _report(self, title: str, message: str) -> None:
        """An error dialog naming the file and the cause; kept in ``window.errors``."""
        self.window_.errors.append(message)
        box = QMessageBox(QMessageBox.Icon.Critical, title, message,
                          QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def shutdown(self, timeout: float = CLOSE_WAIT_S) -> bool:
        """Cancel the run and wait for it (bounded); drop pending workers' results."""
        for timer in self._timers.values():
            timer.stop()
        self._plan_task.cancel()
        self._probe_task.cancel()
        return self.runner.stop(timeout) if self.runner is not None else True

    def done(self, code: int) -> None:  # noqa: D401 - Qt API: every way of closing ends here
        self.shutdown()
        super().done(code)


def _form(box: QGroupBox | None, rows: list[tuple[str, QWidget]]) -> Any:
    """A form of ``rows`` (in ``box`` when given; returns the box, else the layout)."""
    form = QFormLayout(box) if box is not None else QFormLayout()
    for label, widget in rows:
        form.addRow(label, widget)
    return box if box is not None else form


def _column(items: list[Any], parent: QWidget | None = None) -> QVBoxLayout:
    """Widgets and layouts top to bottom; ``(item, stretch)`` pairs; a bare int is a stretch."""
    lay = QVBoxLayout(parent) if parent is not None else QVBoxLayout()
    for item in items:
        item, stretch = item if isinstance(item, tuple) else (item, 0)
        if isinstance(item, int):
            lay.addStretch(item)
        elif isinstance(item, QWidget):
            lay.addWidget(item, stretch)
        else:
            lay.addLayout(item, stretch)
    return lay
