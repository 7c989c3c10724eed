"""Where "Fork from here…" is offered: Run ▸ Fork from Here… (F), the step list's and the
timeline's context menus; and the checks that explain when a step cannot be forked.

Why one place: every entry point must refuse the same steps with the same words (a
tool step: "pick a model step"; a sub-agent's model step: only top-level steps fork;
a run still being recorded: save it first), and all of them open the same dialog.
"""

from __future__ import annotations

import weakref
from typing import Any

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox

from loom_core.views.steps import step_seq
from loom_desktop.features.fork.tabs import BranchTabs

MENU_TEXT = "Fork from Here…"


class ForkActions(QObject):
    """The window's fork entry points; :attr:`tabs` runs forks and links their tabs."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.tabs = BranchTabs(window)
        self.dialogs: list[Any] = []  # open fork dialogs
        self.notices: list[str] = []  # explanations shown (tests read them)
        self.last_menu: QMenu | None = None
        self.last_notice: QMessageBox | None = None
        self.action = QAction(MENU_TEXT, window)
        self.action.setShortcut(QKeySequence("F"))
        self.action.setToolTip("Edit the context at the current model step and re-run from it")
        self.action.triggered.connect(lambda _c=False: self.fork_from_here())

    def install_menu(self, menu: QMenu) -> QAction:
        """Add Run ▸ Fork from Here… (the key F works wherever the window has focus)."""
        menu.addAction(self.action)
        self.window.addAction(self.action)
        return self.action

    def attach(self, view: Any) -> None:
        """A new tab: its step list's context menu, and branch links once it is loaded."""
        view.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.table.customContextMenuRequested.connect(lambda pos: self._table_menu(view, pos))
        view.loaded.connect(lambda: self.tabs.on_loaded(view))
        # the plot is built after the step list's first paint (or at once for a live tab);
        # the callable must not hold the tab (that kept a closed tab's whole run in memory)
        tab = weakref.ref(view)
        view.timeline_built.connect(lambda: self._plot_menu(tab()))
        self._plot_menu(view)

    def _plot_menu(self, view: Any) -> None:
        """Fork from the cursor's step via the timeline's own context menu (once the tab
        has a plot; a closed tab has none)."""
        if view is None or view.timeline_widget is None:
            return
        menu = view.timeline_widget.getPlotItem().getViewBox().menu
        if not any(a.text() == MENU_TEXT for a in menu.actions()):
            menu.addSeparator()
            tab = weakref.ref(view)  # the plot's menu may outlive the tab: it must not hold it
            menu.addAction(MENU_TEXT).triggered.connect(
                lambda _c=False: (v := tab()) is not None and self.fork_from_here(v)
            )

    # -- checks ----------------------------------------------------------------------------
    def why_not(self, view: Any, step: int) -> tuple[int | None, str]:
        """(the step's seq, "") when it can be forked, else (None, why not)."""
        session = getattr(view, "session", None)
        doc, tl = getattr(view, "doc", None), getattr(session, "timeline", None)
        if doc is None or tl is None or not getattr(view, "complete", False):
            return None, "open a trace and wait until it is loaded"
        if not doc.is_whole_run:
            return None, (
                "this run is still being recorded (or is not a trace); save it as a "
                "trace to fork it"
            )
        if not 0 <= step < len(tl):
            return None, "pick a model step"
        index, seq = tl.effect_of[step], step_seq(tl, step)
        kind = tl.kind_name(step)
        if seq is None:
            return None, "a user prompt is not a step: pick a model step to fork from"
        if kind != "model":
            return None, f"step {seq} is a {kind} step: pick a model step to fork from"
        depth = doc.effects[index].depth or 0
        if depth:
            return None, (
                f"step {seq} is a sub-agent's model step (depth {depth}): only "
                "top-level model steps can be forked"
            )
        return seq, ""

    def step_menu(self, view: Any, step: int) -> QMenu:
        """The step list's context menu for ``step`` (the fork item disabled, with the reason)."""
        menu = QMenu(view)
        seq, why = self.why_not(view, step)
        text = MENU_TEXT if seq is not None else f"{MENU_TEXT} ({_short(why)})"
        action = menu.addAction(text)
        action.setEnabled(seq is not None)
        action.setToolTip(why or "Edit the context at this step and re-run from it")
        action.triggered.connect(lambda _c=False: self.fork_from_here(view, step))
        self.last_menu = menu
        return menu

    def _table_menu(self, view: Any, pos: QPoint) -> None:
        index = view.table.indexAt(pos)
        if not index.isValid():
            return
        step = view.model.step_at(index.row())
        view.session.set_step(step)
        menu = self.step_menu(view, step)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(view.table.viewport().mapToGlobal(pos))

    # -- the dialog ------------------------------------------------------------------------
    def fork_from_here(self, view: Any = None, step: int | None = None) -> Any:
        """Open the fork dialog at ``step`` (default: the current step of the current tab)."""
        from loom_desktop.document.view import DocumentView
        from loom_desktop.features.fork.dialog import ForkDialog

        view = view if view is not None else self.window.tabs.currentWidget()
        if not isinstance(view, DocumentView):
            return self.notice("Fork from here: open a trace tab and pick a model step")
        step = view.session.step if step is None else step
        seq, why = self.why_not(view, step)
        if seq is None:
            return self.notice(f"Cannot fork here: {why}.")
        dialog = ForkDialog(self.window, view.path, view.doc, seq)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        doc = view.doc  # the tab may be closed before the dialog starts anything
        dialog.start_requested.connect(lambda job: self.tabs.start(job, doc))
        dialog.destroyed.connect(
            lambda: self.dialogs.remove(dialog) if dialog in self.dialogs else None
        )
        self.dialogs.append(dialog)
        dialog.load()
        dialog.open()
        return dialog

    def notice(self, text: str) -> None:
        """Explain why nothing opened (non-blocking box; kept in :attr:`notices`)."""
        self.notices.append(text)
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "Fork from here",
            text,
            QMessageBox.StandardButton.Ok,
            self.window,
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.last_notice = box
        return None

    def shutdown(self) -> None:
        """Close the dialogs (their workers' results are dropped) and stop every run."""
        for dialog in list(self.dialogs):
            dialog.shutdown()
            dialog.close()
        self.tabs.shutdown()


def _short(why: str) -> str:
    if "sub-agent" in why:
        return "only top-level model steps"
    if "model step" in why:
        return "pick a model step"
    return why.split(";")[0]
