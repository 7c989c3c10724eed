"""Heal…: define the check, see the planned repairs, run them, keep the winner.

Why the plan comes first: each repair is a fork that spends tokens, so the dialog
lists the candidates (which finding, where it forks, the dry-run estimate,
cheapest first) before Start. The check is validated as it is typed (a bad regex
or an unimportable ``module:function`` says why and keeps Start disabled). The
run belongs to the dialog (:class:`~.runner.HealRunner`): Cancel stops it,
closing the dialog cancels it and waits, bounded. A winner opens as a branch tab
with a compare tab against the original, and can be saved as a regression trace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from loom_core.heal.engine import HealOptions
from loom_desktop.dialogs import fit_size
from loom_desktop.features.heal import runner as heal_runner
from loom_desktop.features.heal.candidates import HealCandidates
from loom_desktop.features.heal.runner import (
    HealJob,
    HealPlan,
    HealRunner,
    out_dir_for,
    plan_heal,
    probe,
    save_winner,
)
from loom_desktop.features.heal.setup import BudgetBox, CheckForm
from loom_desktop.infra.workers import Task

DEBOUNCE_MS = 250
CLOSE_WAIT_S = 15.0


class HealDialog(QDialog):
    """Non-modal; one heal of ``view``'s run at a time."""

    def __init__(self, window: Any, view: Any, findings: Any = None) -> None:
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
        self._build()
        fit_size(self, 1280, 700)
        self._plan_task = Task(self)
        self._plan_task.finished.connect(self._on_plan)
        self._plan_task.failed.connect(lambda exc: self._fail("Cannot plan the heal", exc))
        self._probe_task = Task(self)
        self._probe_task.finished.connect(self._on_probe)
        self._probe_task.failed.connect(lambda exc: self._on_probe((False, str(exc))))
        self._timers = {
            name: QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
            for name in ("check", "plan", "probe")
        }
        self._timers["check"].timeout.connect(self.validate)
        self._timers["plan"].timeout.connect(self.replan)
        self._timers["probe"].timeout.connect(self._probe)
        self._wire()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        self.header = QLabel(
            wordWrap=True,
            text=(
                f"<b>Heal {Path(self.path).name}</b>: each repair redacts one item the doctor "
                "flagged and re-runs the run from the first model step that saw it; the "
                "first-ranked branch whose output passes the check wins."
            ),
        )
        self.check_form = CheckForm()
        self.fields, self.check_label = self.check_form.fields, self.check_form.label
        self.budget = BudgetBox()
        self.settings, self.max_candidates = self.budget.settings, self.budget.max_candidates
        self.candidates = HealCandidates()
        self.model, self.result_label = self.candidates.model, self.candidates.result_label
        self.start_btn = QPushButton("Start", default=True)
        self.start_btn.setEnabled(False)
        self.cancel_btn = QPushButton("Cancel run")
        self.cancel_btn.setEnabled(False)
        self.save_btn = QPushButton("Save as regression trace…")
        self.save_btn.setEnabled(False)
        self.close_btn = QPushButton("Close")
        self._place()

    def _place(self) -> None:
        left = QVBoxLayout()
        left.addWidget(self.check_form)
        left.addWidget(self.budget)
        left.addStretch(1)
        body = QHBoxLayout()
        body.addLayout(left, 4)
        body.addWidget(self.candidates, 7)
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_btn)
        buttons.addStretch(1)
        for b in (self.start_btn, self.cancel_btn, self.close_btn):
            buttons.addWidget(b)
        outer = QVBoxLayout(self)
        outer.addWidget(self.header)
        outer.addLayout(body, 1)
        outer.addLayout(buttons)

    def _wire(self) -> None:
        self.check_form.edited.connect(lambda: self._debounce("check"))
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

    def _debounce(self, name: str) -> None:
        self.start_btn.setEnabled(False)
        self._timers[name].start()

    # -- the check, the plan, the provider ----------------------------------------------
    def validate(self) -> bool:
        """Build the check from the fields; its error (CheckError's words) is shown below them."""
        self.check = self.check_form.validate()
        self._update_buttons()
        return self.check is not None

    def replan(self) -> None:
        doc, path, findings = self.doc, self.path, self.findings
        options = self.options()
        self.candidates.show_planning()
        self._plan_task.start(lambda _c: plan_heal(doc, path, findings, options))

    def _on_plan(self, plan: HealPlan) -> None:
        first = self.plan is None
        self.plan, self.findings = plan, plan.findings
        self.candidates.show_plan(plan)
        if first:
            # prefilled like a fork of this run; its ``changed`` schedules the provider probe
            self.settings.set_context(
                plan.recorded_model, plan.provider, plan.workspace, plan.why_no_agent
            )
        self._update_buttons()

    def _probe(self) -> None:
        args = (
            self.settings.provider_name(),
            self.settings.model_text(),
            self.settings.base_url_text(),
        )
        self._probe_task.start(lambda _c: probe(*args))

    def _on_probe(self, found: tuple[bool, str]) -> None:
        self.provider_ok = found[0]
        self.settings.set_availability(*found)
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self.runner is not None and not self.runner.ended
        usable = self.settings.mode() == "agent" or self.provider_ok
        self.start_btn.setEnabled(
            not running
            and self.plan is not None
            and self.check is not None
            and usable
            and not any(t.isActive() for t in self._timers.values())
        )
        self.cancel_btn.setEnabled(running)
        self.save_btn.setEnabled(
            not running and self.result is not None and self.result.winner is not None
        )

    def options(self) -> HealOptions:
        return self.budget.options()

    # -- running ------------------------------------------------------------------------
    def start(self) -> None:
        if self.plan is None or not self.validate():
            return
        if self.settings.mode() == "agent" and not self.settings.confirm_agent(
            "Each repair runs the agent's command again, for real", "Start the heal?"
        ):
            return
        s = self.settings
        try:
            out_dir = str(out_dir_for(self.path, s.folder_text()))
        except OSError as err:
            self._fail("Cannot start the heal", err)
            return
        job = HealJob(
            self.doc,
            self.path,
            self.check,
            self.plan.findings,
            self.plan.candidates,
            out_dir,
            self.options(),
            s.provider_name(),
            s.model_text(),
            s.base_url_text(),
        )
        self.result = None
        self.candidates.show_running(self.plan.candidates, out_dir)
        self.runner = HealRunner(job, self)
        self.runner.updated.connect(self.model.update)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.runner.start()
        self._update_buttons()

    def cancel_run(self) -> None:
        if self.runner is not None and not self.runner.ended:
            self.candidates.show_cancelling()
            self.runner.cancel()

    def _on_finished(self, result: Any) -> None:
        self.result = result
        self.candidates.show_result(result, self.path)
        self._update_buttons()
        if result.winner is not None:
            self.open_winner(str(result.winner.path))

    def _on_failed(self, message: str) -> None:
        self.candidates.show_failure(message)
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
            saved = save_winner(winner, folder)
        except (OSError, ValueError) as err:
            self._fail("Cannot save the regression trace", err, winner)
            return None
        self.candidates.show_saved(saved)
        return saved

    # -- errors and closing ----------------------------------------------------------------
    def _fail(self, title: str, exc: object, path: str | None = None) -> None:
        from loom_core.errors import LoadError

        cause = exc.cause if isinstance(exc, LoadError) else f"{type(exc).__name__}: {exc}"
        self.candidates.show_problem(cause)
        self._report(title, f"{title}: {path or self.path}\n\n{cause}")

    def _report(self, title: str, message: str) -> None:
        """An error dialog over this one naming the file and the cause (the window keeps it)."""
        self.window_.report_error(title, message, parent=self)

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
