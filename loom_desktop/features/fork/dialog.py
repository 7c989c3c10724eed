"""Fork from here…: edit the context at a model step, pick provider and limits, see the cost, start.

Why everything heavy runs in workers: the context at a step of a big run takes about
a second to build (:func:`loom_core.fork.point.fork_context`), the dry run walks the
parent's tail, and building an SDK provider imports its SDK; the dialog stays
responsive and shows "reading…" meanwhile. The estimate is recomputed, debounced,
whenever the edit, the model or the limits change; a newer estimate supersedes an
older one (:class:`~loom_desktop.infra.workers.Task`).

The dialog only describes a run (:class:`~.runner.ForkJob`); the window's
fork actions start it, so closing the dialog never stops a fork.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from loom_core.fork.edits import Edit
from loom_desktop.dialogs import fit_size
from loom_desktop.features.fork import runner as fork_runner
from loom_desktop.features.fork.draft import ForkDraft
from loom_desktop.features.fork.messages import MessageEditor
from loom_desktop.features.fork.runner import ForkJob
from loom_desktop.features.fork.settings import BAD_STYLE, RunSettings, plan_text
from loom_desktop.features.fork.work import estimate, read_fork_point
from loom_desktop.infra.workers import Task

ESTIMATE_DEBOUNCE_MS = 300


class ForkDialog(QDialog):
    """Non-modal; ``start_requested(ForkJob)`` when the user starts (``out`` left empty)."""

    start_requested = Signal(object)

    def __init__(self, parent: QWidget | None, path: str, doc: Any, seq: int) -> None:
        """Fork ``path`` at model step ``seq`` (steps are named by seq everywhere)."""
        super().__init__(parent)
        self.path, self.doc, self.seq = path, doc, seq
        self.draft: ForkDraft | None = None
        self.plan: Any = None
        self.plan_error: str | None = None
        self.provider_ok = False
        self.setWindowTitle(f"Fork {Path(path).name} at step {seq}")
        self._build()
        fit_size(self, 1180, 760)
        self._ctx_task = Task(self)
        self._ctx_task.finished.connect(self._on_context)
        self._ctx_task.failed.connect(self._on_context_failed)
        self._plan_task = Task(self)
        self._plan_task.finished.connect(self._on_estimate)
        self._plan_task.failed.connect(self._on_estimate_failed)
        self._timer = QTimer(self, singleShot=True, interval=ESTIMATE_DEBOUNCE_MS)
        self._timer.timeout.connect(self._estimate)
        self.finished.connect(self.shutdown)

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        self.header = QLabel(f"Reading the context at step {self.seq}…", wordWrap=True)
        self.messages = MessageEditor()
        self.note = QPlainTextEdit(
            placeholderText="A note to add after the context, as a "
            "user message (e.g. a hint or a correction)"
        )
        self.note.setMaximumHeight(70)
        self.system = QPlainTextEdit()
        self.tools = QListWidget()
        self.tabs = QTabWidget()
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.addWidget(self.messages, 1)
        lay.addWidget(QLabel("Inject a note at the fork point:"))
        lay.addWidget(self.note)
        self.tabs.addTab(page, "Messages")
        self.tabs.addTab(self.system, "System prompt")
        self.tabs.addTab(self.tools, "Tools")
        self.settings = RunSettings()
        self.estimate_label = QLabel("Estimating…", wordWrap=True)
        self.estimate_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warnings = QLabel(wordWrap=True)
        self.warnings.setVisible(False)
        self.warnings.setStyleSheet(BAD_STYLE)
        box = QGroupBox("Estimate (dry run: nothing is spent)")
        QVBoxLayout(box).addWidget(self.estimate_label)
        right = QWidget()
        rlay = QVBoxLayout(right)
        rlay.addWidget(self.settings)
        rlay.addWidget(box)
        rlay.addWidget(self.warnings)
        rlay.addStretch(1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.tabs)
        split.addWidget(right)
        split.setSizes([700, 460])
        self.buttons = QDialogButtonBox()
        self.start_btn = self.buttons.addButton(
            "Start fork", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.start_btn.setEnabled(False)
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.reject)
        outer = QVBoxLayout(self)
        outer.addWidget(self.header)
        outer.addWidget(split, 1)
        outer.addWidget(self.buttons)

    # -- the context -------------------------------------------------------------------
    def load(self) -> None:
        """Build the context off the GUI thread; the editors fill in when it is ready."""
        doc, path, seq = self.doc, self.path, self.seq
        self._ctx_task.start(lambda _c: read_fork_point(doc, path, seq))

    @property
    def ready(self) -> bool:
        return self.draft is not None

    def _on_context(self, found: dict[str, Any]) -> None:
        ctx = found["ctx"]
        self.draft = ForkDraft(ctx)
        source = (
            "from the exact request the proxy recorded"
            if ctx.source == "request"
            else "reconstructed from the log (tools known by name only)"
            if ctx.style == "harness"
            else "reconstructed from the log"
        )
        self.header.setText(
            f"<b>Fork {Path(self.path).name} at step {self.seq}</b> · model call, turn "
            f"{ctx.turn} · {len(ctx.messages)} message(s), context "
            f"{source}. Steps before it replay free; the tail runs again."
        )
        self.messages.set_draft(self.draft)
        self.system.setPlainText(ctx.system)
        for tool in ctx.tools:
            about = f" — {tool.description}" if tool.description else ""
            item = QListWidgetItem(tool.name + about)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.tools.addItem(item)
        self.tabs.setTabText(2, f"Tools ({len(ctx.tools)})")
        self.settings.set_context(ctx.model, found["provider"], found["workspace"], found["why"])
        self.messages.changed.connect(self.schedule_estimate)
        self.note.textChanged.connect(self._note_changed)
        self.system.textChanged.connect(self._system_changed)
        self.tools.itemChanged.connect(self._tool_changed)
        self.settings.changed.connect(self.schedule_estimate)
        self._estimate()

    def _on_context_failed(self, exc: object) -> None:
        from loom_core.errors import LoadError

        cause = exc.cause if isinstance(exc, LoadError) else str(exc)
        self.header.setText(f"Cannot fork {Path(self.path).name} at step {self.seq}: {cause}")
        self.header.setStyleSheet(BAD_STYLE)

    def _note_changed(self) -> None:
        if self.draft is not None:
            self.draft.note = self.note.toPlainText()
            self.schedule_estimate()

    def _system_changed(self) -> None:
        if self.draft is not None:
            self.draft.system = self.system.toPlainText()
            self.schedule_estimate()

    def _tool_changed(self, item: QListWidgetItem) -> None:
        if self.draft is not None:
            self.draft.set_tool(self.tools.row(item), item.checkState() == Qt.CheckState.Checked)
            self.schedule_estimate()

    # -- the estimate --------------------------------------------------------------------
    def edit(self) -> Edit:
        """The dialog's state as an :class:`Edit` (only what changed)."""
        assert self.draft is not None
        return self.draft.to_edit(self.settings.model_text(), self.settings.reason.text())

    def schedule_estimate(self) -> None:
        self.start_btn.setEnabled(False)
        self._timer.start()

    def _estimate(self) -> None:
        if self.draft is None:
            return
        warn = self.draft.warnings()
        self.warnings.setText("⚠ " + "; ".join(warn) if warn else "")
        self.warnings.setVisible(bool(warn))
        name, url = self.settings.provider_name(), self.settings.base_url_text()
        args = (
            self.doc,
            self.path,
            self.seq,
            self.edit(),
            self.settings.max_turns.value(),
            lambda: fork_runner.make_provider(name, "", url),
            self.settings.mode() == "agent",
        )
        self.estimate_label.setText("Estimating…")
        self._plan_task.start(lambda _c: estimate(*args))

    def _on_estimate(self, found: dict[str, Any]) -> None:
        self.provider_ok = found["ok"]
        self.settings.set_availability(found["ok"], found["line"])
        self.plan, self.plan_error = found["plan"], found["error"]
        if self.plan is None:
            self._show_estimate_error(found["error"] or "no estimate")
            return
        self.estimate_label.setStyleSheet("")
        self.estimate_label.setText(plan_text(self.plan, self.settings.budget_tokens()))
        self._update_start()

    def _on_estimate_failed(self, exc: object) -> None:
        self._show_estimate_error(f"{type(exc).__name__}: {exc}")

    def _show_estimate_error(self, message: str) -> None:
        self.plan_error = message
        self.estimate_label.setText(f"This edit cannot run: {message}")
        self.estimate_label.setStyleSheet(BAD_STYLE)
        self._update_start()

    def _update_start(self) -> None:
        agent = self.settings.mode() == "agent"
        self.start_btn.setEnabled(
            self.draft is not None and self.plan_error is None and (agent or self.provider_ok)
        )

    # -- starting ------------------------------------------------------------------------
    def job(self) -> ForkJob:
        s = self.settings
        return ForkJob(
            self.path,
            self.seq,
            self.edit(),
            "",
            s.mode(),
            s.provider_name(),
            s.model_text(),
            s.base_url_text(),
            s.max_turns.value(),
            s.budget_tokens(),
            s.reason.text().strip(),
            folder=s.folder_text(),
        )

    def start(self) -> None:
        if self.draft is None:
            return
        job = self.job()
        if job.mode == "agent" and not self.settings.confirm_agent(
            "The agent's command will really run", "Start the agent re-run?"
        ):
            return
        self.start_requested.emit(job)
        self.accept()

    def shutdown(self, *_: Any) -> None:
        """Stop the debounce timer and drop outstanding workers' results."""
        self._timer.stop()
        self._ctx_task.cancel()
        self._plan_task.cancel()
