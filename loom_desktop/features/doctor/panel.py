"""The doctor panel: the current tab's checkup findings, marked on its timeline, and Heal….

Why it follows the current tab and keeps one checkup per tab: a checkup takes about
a second on a big run, so it runs in a worker once, when a finished run is shown
while the panel is open (not for every file opened with the panel closed), and is
kept until the tab closes. A live run keeps changing: it is checked on demand
(Refresh), on a snapshot of the effects recorded so far. Clicking a finding goes to
the first model step that saw the item (where it could mislead the model) and marks
the item in the context view; each finding is also an arrow on the timeline.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from loom_core.live.live_status import ENDED
from loom_desktop.features.doctor.findings_model import (
    F_MESSAGE,
    FindingsModel,
    locate,
    marked_effect,
)
from loom_desktop.infra.workers import Task

SHORTCUT = "Ctrl+Shift+K"


def snapshot(doc: Any) -> Any:
    """The document as it is now: a live journal's lists keep growing on the GUI thread,
    so the worker gets copies of them (the effects themselves never change)."""
    if doc.format == "trace":
        return doc
    entries = list(doc.entries) if doc.entries is not None else None
    return dataclasses.replace(doc, effects=list(doc.effects), entries=entries)


def summary_text(result: Any) -> str:
    """The panel's one-line verdict."""
    if not result.findings:
        return f"context looks healthy ({result.total_tokens:,} tokens)"
    return f"{len(result.findings)} finding(s) in {result.total_tokens:,} tokens"


class DoctorPanel(QDockWidget):
    """View ▸ Doctor (Ctrl+Shift+K); also opens the heal dialog (Run ▸ Heal…)."""

    def __init__(self, window: Any) -> None:
        super().__init__("Doctor", window)
        self.setObjectName("doctor")
        self.window_ = window
        self.model = FindingsModel(self)
        self.results: dict[int, tuple[Any, list[tuple[int | None, int | None]]]] = {}
        self.dialogs: list[Any] = []  # open heal dialogs
        self.notices: list[str] = []  # explanations shown (tests read them)
        self._checking: Any = None  # the view whose checkup is running
        self._hooked: set[int] = set()
        self._sized = False  # given its first height (see _first_show)
        self._task = Task(self)
        self._task.finished.connect(self._on_checkup)
        self._task.failed.connect(self._on_failed)
        self._build()
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self)
        self.hide()
        self.visibilityChanged.connect(lambda visible: self.follow() if visible else None)
        self.visibilityChanged.connect(self._first_show)
        window.tabs.currentChanged.connect(lambda _i: self.follow())

    def _first_show(self, visible: bool) -> None:
        """Shown the first time: a quarter of the window's height. Qt gave it 344 of 820 px
        for two findings, and the step list kept eight rows; the user resizes from there."""
        if visible and not self._sized:
            self._sized = True
            win = self.window_
            height = max(self.minimumSizeHint().height(), win.height() // 4)
            QTimer.singleShot(
                0, self, lambda: win.resizeDocks([self], [height], Qt.Orientation.Vertical)
            )

    def _build(self) -> None:
        body = QWidget()
        self.summary = QLabel("open a run to check its context")
        self.summary.setStyleSheet("font-weight: bold;")
        # a long verdict wraps instead of widening the window past a small screen
        self.summary.setWordWrap(True)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.refresh_btn = QPushButton("Refresh")
        self.refresh_btn.clicked.connect(lambda: self.refresh())
        self.refresh_btn.setToolTip("Check the context again (a live run: what is recorded so far)")
        self.heal_btn = QPushButton("Heal…")
        self.heal_btn.clicked.connect(lambda: self.heal())
        self.heal_btn.setToolTip("Try redacting each finding as a fork until a check passes")
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.refresh_btn)
        top.addWidget(self.heal_btn)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(F_MESSAGE, QHeaderView.ResizeMode.Stretch)
        for col, width in ((0, 80), (1, 110), (2, 50), (3, 60), (4, 70), (5, 60), (7, 380)):
            self.table.setColumnWidth(col, width)
        self.table.selectionModel().currentRowChanged.connect(
            lambda cur, _prev: self.jump(cur.row()) if cur.isValid() else None
        )
        self.table.clicked.connect(self._clicked)
        lay = QVBoxLayout(body)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.addLayout(top)
        lay.addWidget(self.table)
        self.setWidget(body)

    def install(self, view_menu: QMenu, run_menu: QMenu) -> None:
        """View ▸ Doctor (shows or hides the panel) and Run ▸ Heal…."""
        toggle = self.toggleViewAction()
        toggle.setText("&Doctor")
        toggle.setShortcut(QKeySequence(SHORTCUT))
        view_menu.addAction(toggle)
        self.window_.addAction(toggle)
        self.heal_action = QAction("&Heal…", self.window_)
        self.heal_action.setToolTip("Find the suspect context and try repairs until a check passes")
        self.heal_action.triggered.connect(lambda _c=False: self.heal())
        run_menu.addAction(self.heal_action)

    # -- following the tabs --------------------------------------------------------------
    def current_view(self) -> Any:
        from loom_desktop.document.view import DocumentView

        widget = self.window_.tabs.currentWidget()
        return widget if isinstance(widget, DocumentView) else None

    def follow(self) -> None:
        """Show the current tab's findings (checking a finished run first if needed)."""
        view = self.current_view()
        if view is not None and id(view) not in self._hooked:
            key = id(view)
            self._hooked.add(key)
            view.loaded.connect(lambda v=view: self._view_loaded(v))
            view.status_changed.connect(lambda v=view: self._live_ended(v))
            view.destroyed.connect(lambda _o=None, k=key: self._forget(k))
        if view is None or view.doc is None:
            self._show(
                None,
                "open a run to check its context"
                if view is None
                else "waiting for the run to load…",
            )
        elif id(view) in self.results:
            self._show(view)
        elif view.live is not None and view.live.status not in ENDED:
            self._show(None, "live run: press Refresh to check the context recorded so far")
        elif view.complete and self.isVisible():
            self.refresh(view)
        else:
            self._show(None, "waiting for the run to load…")

    def _view_loaded(self, view: Any) -> None:
        if view.live is None:
            self.results.pop(id(view), None)  # a reload: the old checkup is stale
        if view is self.current_view():
            self.follow()

    def _live_ended(self, view: Any) -> None:
        """A live run that has ended is checked as a finished one is (it said "live run:
        press Refresh" after the demo's agent had exited)."""
        live = view.live
        if live is not None and live.status in ENDED and view is self.current_view():
            if id(view) not in self.results and self._checking is not view:
                self.follow()

    def _forget(self, key: int) -> None:
        self.results.pop(key, None)
        self._hooked.discard(key)

    # -- the checkup -----------------------------------------------------------------------
    def refresh(self, view: Any = None) -> None:
        """Check ``view`` (default: the current tab) in a worker."""
        view = view if view is not None else self.current_view()
        if view is None or view.doc is None:
            return
        from loom_core.doctor import checkup

        doc = snapshot(view.doc)
        self._checking = view
        self._show(None, "checking the context…")
        self._task.start(lambda _ctx: checkup(doc))

    def _on_checkup(self, result: Any) -> None:
        view, self._checking = self._checking, None
        if view is None or view not in self.window_.documents():
            return  # closed meanwhile
        tl = view.session.timeline
        steps = [locate(f, view.doc, tl) for f in result.findings]
        self.results[id(view)] = (result, steps)
        state = view.context_view.state
        if state.highlight is not None or state.highlight_episode is not None:
            view.context_view.highlight_effect(None)  # the old mark may point at a stale item
        view.ensure_timeline()
        view.timeline_widget.set_findings(
            [
                (entered, f.severity)
                for f, (entered, _j) in zip(result.findings, steps, strict=True)
                if entered is not None
            ]
        )
        if view is self.current_view():
            self._show(view)

    def _on_failed(self, exc: object) -> None:
        view, self._checking = self._checking, None
        from loom_core.errors import LoadError

        cause = exc.cause if isinstance(exc, LoadError) else f"{type(exc).__name__}: {exc}"
        path = getattr(view, "path", "the run")
        message = f"Cannot check {path}\n\n{cause}"
        self._show(None, f"✗ cannot check this run: {cause}")
        self.window_.report_error("Doctor", message)

    def _show(self, view: Any, text: str | None = None) -> None:
        if view is None:
            self.model.set_findings((), [])
            self.summary.setText(text or "")
            self.summary.setStyleSheet("font-weight: bold; color: #555;")
            return
        result, steps = self.results[id(view)]
        self.model.set_findings(result.findings, steps)
        self.summary.setText(
            summary_text(result)
            + (
                " — click one to see it in the context of the model call that first saw it"
                if result.findings
                else ""
            )
        )
        color = (
            "#c62828"
            if any(f.severity == "high" for f in result.findings)
            else "#8d6e00"
            if result.findings
            else "#2e7d32"
        )
        self.summary.setStyleSheet(f"font-weight: bold; color: {color};")

    # -- jumping ---------------------------------------------------------------------------
    def jump(self, row: int) -> None:
        """Go to the finding's model step and mark its item in the context view."""
        view, finding = self.current_view(), self.model.finding_at(row)
        step = self.model.jump_of(row)
        if view is None or finding is None or step is None:
            return
        episode = finding.episode if finding.effect is None else None
        view.show_context_item(
            step, marked_effect(finding, view.doc, view.session.timeline), episode
        )

    def _clicked(self, index: QModelIndex) -> None:
        """A click on the current row again (the user scrolled away meanwhile)."""
        view = self.current_view()
        if view is not None and view.session.step != self.model.jump_of(index.row()):
            self.jump(index.row())
        elif view is not None:
            view.context_view.scroll_to_mark()

    # -- heal ------------------------------------------------------------------------------
    def heal(self, view: Any = None) -> Any:
        """Open the heal dialog for ``view`` (default: the current tab); None with a notice."""
        from loom_desktop.features.heal.dialog import HealDialog

        view = view if view is not None else self.current_view()
        if view is None or view.doc is None or not view.complete:
            return self.notice("Heal: open a trace and wait until it is loaded.")
        if not view.doc.is_whole_run:
            return self.notice(
                "Heal: this run is still being recorded (or is not a trace); "
                "save it as a trace to heal it."
            )
        cached = self.results.get(id(view))
        dialog = HealDialog(self.window_, view, cached[0].findings if cached else None)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(
            lambda _o=None, d=dialog: self.dialogs.remove(d) if d in self.dialogs else None
        )
        self.dialogs.append(dialog)
        dialog.load()
        dialog.show()
        return dialog

    def notice(self, text: str) -> None:
        self.notices.append(text)
        box = QMessageBox(
            QMessageBox.Icon.Information, "Heal", text, QMessageBox.StandardButton.Ok, self.window_
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return None

    def shutdown(self) -> None:
        """Drop the running checkup's result; cancel every heal and wait for it (bounded)."""
        self._task.cancel()
        for dialog in list(self.dialogs):
            dialog.shutdown()
            dialog.close()
