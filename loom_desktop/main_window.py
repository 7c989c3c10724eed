"""The main window: documents as tabs, menus, recent files, status bar, errors.

Every way of opening a file (command line, File ▸ Open, Open Recent, drag and
drop, a second instance, a macOS open event) ends in :meth:`MainWindow.open_path`.
A file that cannot be opened gives a dialog naming the file and the cause; the
other tabs keep working.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QStackedWidget,
    QWidget,
)

from loom_core.errors import LoadError
from loom_core.formats.foreign import format_label
from loom_core.live.live_status import ENDED
from loom_core.views.pricing import provenance
from loom_core.views.steps import step_label
from loom_desktop import __version__
from loom_desktop.dialogs import fit_size, show_about, show_shortcuts
from loom_desktop.document.step_list_model import format_cost
from loom_desktop.document.view import DocumentView
from loom_desktop.infra.file_filter import run_file_filter
from loom_desktop.infra.price_warning import warn_bad_prices
from loom_desktop.infra.settings import DesktopSettings, load_settings, save_settings
from loom_desktop.keys import FILTER_HELP
from loom_desktop.tab_titles import LIVE_DOT, name_run, retitle, show_live
from loom_desktop.window_parts import (
    EMPTY_TEXT,
    DocumentTabs,
    StatusBar,
    held_message,
    join_area,
)

if TYPE_CHECKING:
    from loom_desktop.features.compare.dialog import CompareDialog
    from loom_desktop.features.compare.view import CompareView
    from loom_desktop.features.library.window_ui import LibraryUi
    from loom_desktop.features.proxy.approvals_panel import ApprovalsPanel
    from loom_desktop.features.proxy.attach_dialog import AttachDialog
    from loom_desktop.features.proxy.connection import ProxyConnection
    from loom_desktop.features.proxy.demo_runner import DemoRun

STANDARD_FALLBACK = {QKeySequence.StandardKey.Quit: "Ctrl+Q"}


class MainWindow(QMainWindow):
    """Tabs of :class:`DocumentView`, with the menus and status bar around them."""

    def __init__(self, settings: DesktopSettings | None = None, reattach: bool = True) -> None:
        """``reattach``: take over the proxies an app that is gone left running (not for a
        ``--screenshot`` window, which closes at once and would stop them)."""
        super().__init__()
        self.setWindowTitle("Loom Desktop")
        self.setStatusBar(StatusBar())  # before any feature adds a field to it
        self.settings = settings or load_settings()
        self.errors: list[str] = []  # messages shown in error dialogs (tests read them)
        self.failures: list[tuple[str, str]] = []  # (path, cause) of each failed open
        self.proxies: list[ProxyConnection] = []  # the proxies the approvals panel follows
        self.tabs = DocumentTabs(documentMode=True, tabsClosable=True, movable=True)
        self.tabs.retitled.connect(self._show_current)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(lambda _i: self.update_status())
        self.tabs.currentChanged.connect(lambda _i: self._show_current())
        self.empty = QLabel(EMPTY_TEXT, alignment=Qt.AlignmentFlag.AlignCenter, wordWrap=True)
        self.empty.setStyleSheet("color: gray;")
        self.central = QStackedWidget()  # the tabs, or what to do when there are none
        self.central.addWidget(self.tabs)
        self.setCentralWidget(self.central)
        self.setAcceptDrops(True)
        from loom_desktop.features.proxy.manager import ProxyManager

        self.proxy_manager = ProxyManager(self)  # proxies started here (Proxy ▸ Start…)
        self.demo: DemoRun | None = None  # the running offline demo (Help ▸ Run offline demo)
        from loom_desktop.infra.notify import HeldNotifier

        self.notifier = HeldNotifier(self)  # held calls while the window is in the background
        from loom_desktop.features.proxy.attached import AttachedProxies

        self.attached = AttachedProxies(  # the approvals panel over every proxy followed
            self,
            self.proxies,
            lambda n: self.statusBar().showMessage(held_message(n), 10_000),
        )
        self._build_menus()
        self._build_status()
        self._show_current()
        if reattach:  # proxies that outlived the last run
            QTimer.singleShot(0, self.proxy_manager.reattach)
        QTimer.singleShot(0, lambda: warn_bad_prices(self, self.errors))  # never silent
        QTimer.singleShot(0, self.seat.start_after_first_paint)
        fit_size(self, 1280, 820)
        geometry = self.settings.geometry_bytes()
        if geometry is not None:
            self.restoreGeometry(geometry)

    # -- menus ------------------------------------------------------------------------
    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        self._action(file_menu, "&Watch Journal…", self.watch_dialog, "Ctrl+Shift+O")
        self._action(file_menu, "Open Claude Code &Session…", self.claude_sessions_dialog)
        self._otel_menu(file_menu)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._export_menu(file_menu)
        self._action(
            file_menu,
            "&Close Tab",
            lambda: self.close_tab(self.tabs.currentIndex()),
            QKeySequence.StandardKey.Close,
        )
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        proxy = self.menuBar().addMenu("&Proxy")
        self._action(proxy, "&Start…", self.proxy_manager.start_dialog)
        self._action(proxy, "S&top", self.proxy_manager.stop_menu)
        self._action(proxy, "&Re-attach Running Proxies", self._reattach)
        self._action(proxy, "&Attach to a Running Proxy…", self.attach_dialog)
        view = self.menuBar().addMenu("&View")
        self._action(
            view, "&Filter Steps", self._focus_filter, QKeySequence.StandardKey.Find
        ).setToolTip(FILTER_HELP)
        self._action(view, "Play / Pause", lambda: self._with_doc(DocumentView.toggle_play))
        self._library(view)
        self.run_menu = self.menuBar().addMenu("&Run")
        self._action(self.run_menu, "&Compare…", self.compare_dialog, "Ctrl+Shift+D")
        self._fork_menu()
        self._doctor_menu(view)
        self.seat.install_settings(self.menuBar().addMenu("&Settings"))
        help_menu = self.menuBar().addMenu("&Help")
        self._action(help_menu, "Run offline &demo", self.run_demo)
        self._action(help_menu, "&Keyboard Shortcuts", lambda: show_shortcuts(self), "?")
        self._action(help_menu, "&About Loom Desktop", lambda: show_about(self, __version__))

    def _export_menu(self, file_menu: QMenu) -> None:
        """File ▸ Export ▸ Self-contained HTML (optionally scrubbed)."""
        from loom_desktop.features.export.actions import ExportActions

        self.exports = ExportActions(self)
        self.exports.install(file_menu)

    def _otel_menu(self, file_menu: QMenu) -> None:
        """File ▸ Listen for OpenTelemetry…: a local OTLP receiver, each trace a live tab."""
        from loom_desktop.features.otel.actions import OtelActions

        self.otel = OtelActions(self)
        self.otel.install(file_menu)

    def _library(self, view_menu: QMenu) -> None:
        """The run library: the start page and View ▸ Runs (Ctrl+Shift+R), built once the
        run opened at start has painted (see :mod:`loom_desktop.features.library.seat`)."""
        from loom_desktop.features.library.seat import LibrarySeat

        self.seat = LibrarySeat(self, self.empty, view_menu)

    @property
    def library(self) -> LibraryUi:
        """The run library's part of the window, built now if it was not yet."""
        return self.seat.ui

    def library_built(self) -> None:
        """The seat built the library: the start page shows if no tab is open."""
        self._show_current()

    def _fork_menu(self) -> None:
        """Run ▸ Fork from Here… (F), step context menus and branch ⟷ parent links."""
        from loom_desktop.features.fork.actions import ForkActions

        self.forks = ForkActions(self)
        self.forks.install_menu(self.run_menu)

    def _doctor_menu(self, view_menu: QMenu) -> None:
        """View ▸ Doctor (Ctrl+Shift+K): the checkup panel; Run ▸ Heal…: the heal dialog."""
        from loom_desktop.features.doctor.panel import DoctorPanel

        self.doctor = DoctorPanel(self)
        self.doctor.install(view_menu, self.run_menu)

    def _action(
        self,
        menu: QMenu,
        text: str,
        slot: Callable[[], object],
        shortcut: QKeySequence.StandardKey | str | None = None,
    ) -> QAction:
        action = QAction(text, self)
        if isinstance(shortcut, QKeySequence.StandardKey):
            # every binding the platform has (Close is Ctrl+F4 *and* Ctrl+W on Linux);
            # Quit has none on some platforms, where Ctrl+Q is what users try
            action.setShortcuts(
                QKeySequence.keyBindings(shortcut)
                or [QKeySequence(STANDARD_FALLBACK.get(shortcut, ""))]
            )
        elif shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        self.addAction(action)
        return action

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.settings.recent_files:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _c=False, p=path: self.open_path(p))
        if not self.settings.recent_files:
            self.recent_menu.addAction("(none)").setEnabled(False)

    def _build_status(self) -> None:
        bar = self.statusBar()
        self.status_labels = {k: QLabel() for k in ("step", "tokens", "cost", "checksum", "format")}
        for key, label in self.status_labels.items():
            if key in ("checksum", "format"):  # these give way (clipped, full text as
                label.setMinimumWidth(1)  # tooltip) before tokens and cost are cut
            bar.addPermanentWidget(label)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.setVisible(False)
        bar.addPermanentWidget(self.progress)

    # -- documents --------------------------------------------------------------------
    def current(self) -> DocumentView | None:
        widget = self.tabs.currentWidget()
        return widget if isinstance(widget, DocumentView) else None

    def documents(self) -> list[DocumentView]:
        return [
            w
            for i in range(self.tabs.count())
            if isinstance(w := self.tabs.widget(i), DocumentView)
        ]

    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open trace", "", run_file_filter())
        for path in paths:
            self.open_path(path)

    def _reattach(self) -> None:
        """Proxy ▸ Re-attach: say what was found, also when nothing was."""
        count = len(self.proxy_manager.reattach())
        self.statusBar().showMessage(
            f"re-attached {count} prox{'y' if count == 1 else 'ies'}"
            if count
            else "no other proxy started here is running; Attach… finds any",
            10_000,
        )

    def attach_dialog(self) -> AttachDialog:
        """Connect the approvals panel to a proxy on this machine (ours or ``loom proxy``),
        chosen from the running ones (their token files) or typed; returns the dialog."""
        from loom_desktop.features.proxy.attach_dialog import AttachDialog

        attached = {c.client.port for c in self.proxies}
        dialog = AttachDialog(self, attached)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda d=dialog: self._attach_chosen(d.port(), attached))
        dialog.open()
        return dialog

    def _attach_chosen(self, port: int, attached: set[int]) -> None:
        if port in attached:
            self.statusBar().showMessage(f"already attached to the proxy on port {port}", 10_000)
        else:
            self.attach_proxy(port)

    def attach_proxy(
        self, port: int, confirm_timeout: float | None = None, run: DocumentView | None = None
    ) -> ApprovalsPanel:
        """List the held calls of the proxy on ``port`` in the approvals panel (one panel
        for every proxy; ``run``: the proxy's live tab); returns the panel."""
        self.attached.attach(port, confirm_timeout, run)
        return self.attached.approvals()

    def run_demo(self, pace: float = 1.0) -> DemoRun:
        """Help ▸ Run offline demo: fake model, proxy holding ``deploy*``, scripted agent."""
        from loom_desktop.features.proxy.demo_runner import DemoRun

        if self.demo is not None:
            self.demo.stop()
        self.demo = DemoRun(self, pace)
        self.demo.start()
        return self.demo

    def compare_dialog(self) -> CompareDialog:
        """Run ▸ Compare…: pick two runs; OK opens them side by side."""
        from loom_desktop.features.compare.dialog import CompareDialog

        return CompareDialog.ask(self)

    def open_compare(
        self, view_a: DocumentView | str, view_b_or_path: DocumentView | str
    ) -> CompareView | None:
        """An A ⟷ B tab for two open tabs (or paths); ``None`` with a dialog if a side is not loaded."""
        from loom_desktop.features.compare.dialog import open_compare_tab

        return open_compare_tab(self, view_a, view_b_or_path)

    def watch_dialog(self) -> None:
        """Follow a journal that is being written, or will be (it need not exist yet)."""
        from loom_desktop.dialogs import watch_file_dialog

        dialog = watch_file_dialog(self)
        if dialog.exec() and dialog.selectedFiles():
            self.open_path(dialog.selectedFiles()[0], watch=True)

    def claude_sessions_dialog(self) -> QDialog:
        """The Claude Code sessions on this machine; the one picked opens in a tab that
        follows it (a session waiting for its next prompt is resumed at any time)."""
        from loom_desktop.features.claude_sessions.dialog import ClaudeSessionsDialog

        dialog = ClaudeSessionsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.chosen.connect(lambda path: self.open_path(path, watch=True))
        dialog.open()
        return dialog

    def open_path(
        self, path: str, background: bool = True, watch: bool = False, defer: bool = False
    ) -> DocumentView:
        """Open ``path`` in a new tab (loading in the background unless told not to);
        ``watch``: follow it even if it is empty or missing (File ▸ Watch Journal…);
        ``defer``: the caller starts its load (a run still arriving from a run store)."""
        view = DocumentView(str(path), self)
        view.failed.connect(lambda exc, v=view: self._load_failed(v, exc))
        view.status_changed.connect(
            lambda v=view: self.update_status() if v is self.current() else None
        )
        view.status_changed.connect(lambda v=view: self._live_dot(v))
        view.progressed.connect(lambda d, t, v=view: self._progress(v, d, t))
        view.loaded.connect(lambda v=view: self._loaded(v))
        for name, splitter in (("main", view.splitter), ("lower", view.lower_split)):
            if self.settings.splitters.get(name):
                splitter.setSizes(self.settings.splitters[name])
        self.forks.attach(view)
        index = self.tabs.addTab(view, Path(path).name)
        self.tabs.setCurrentIndex(index)
        if background and not defer:
            view.start_loading(watch)
            if view.live is not None:
                self.tabs.setTabText(index, LIVE_DOT + Path(path).name)
                self.seat.tell(lambda lib: lib.follow(view, view.path, True))
        elif not defer:
            try:
                view.load_now()
            except LoadError as exc:
                self._load_failed(view, exc)
        retitle(self.tabs, self.documents())  # same-named files get their folder in the title
        self._show_current()
        return view

    def _live_dot(self, view: DocumentView) -> None:
        """A live tab's dot while its run goes on, gone once it has ended."""
        if view.live is not None:
            show_live(self.tabs, view, view.live.status not in ENDED)
            on = not view.live.settled
            self.seat.tell(lambda lib: lib.follow(view, view.path, on))

    def _loaded(self, view: DocumentView) -> None:
        name_run(self.tabs, view)  # a session's UUID or a trace id: titled by its run
        self.settings.add_recent(view.path)
        self.seat.tell(lambda lib: lib.loaded(view.path))
        if view is self.current():
            self.progress.setVisible(False)
            self.update_status()
        view.table.setFocus()

    def _load_failed(self, view: DocumentView, exc: object) -> None:
        cause = exc.cause if isinstance(exc, LoadError) else f"{type(exc).__name__}: {exc}"
        message = f"Cannot open {view.path}\n\n{cause}"
        self.errors.append(message)
        self.failures.append((view.path, cause))
        index = self.tabs.indexOf(view)
        if index >= 0:
            self.close_tab(index)
        self.progress.setVisible(False)
        box = QMessageBox(
            QMessageBox.Icon.Critical,
            "Cannot open file",
            message,
            QMessageBox.StandardButton.Ok,
            self,
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    # -- services for the features (WindowServices) ----------------------------------------
    def report_error(
        self, title: str, message: str, parent: QWidget | None = None, details: str = ""
    ) -> QMessageBox:
        """An error dialog over ``parent`` (default: this window); the message is kept in
        :attr:`errors`."""
        self.errors.append(f"{message}\n\n{details}" if details else message)
        box = QMessageBox(
            QMessageBox.Icon.Critical, title, message, QMessageBox.StandardButton.Ok, parent or self
        )
        if details:
            box.setInformativeText(details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box

    def show_status(self, message: str, timeout_ms: int) -> None:
        self.statusBar().showMessage(message, timeout_ms)

    def note_run(self, path: str, event: str, error: str = "") -> None:
        self.seat.tell(lambda lib: lib.note(path, event, error))

    def close_tab(self, index: int) -> None:
        view = self.tabs.widget(index)
        if view is None:
            return
        if isinstance(view, DocumentView):
            self._remember_splitters(view)
            self.seat.tell(lambda lib: lib.follow(view, view.path, False))  # it reads it again
            view.shutdown()
        elif callable(shutdown := getattr(view, "shutdown", None)):
            shutdown()  # other tabs (Compare) stop their workers too
        self.tabs.removeTab(index)
        view.deleteLater()
        retitle(self.tabs, self.documents())
        self._show_current()

    # -- status ----------------------------------------------------------------------------
    def _progress(self, view: DocumentView, done: int, total: int) -> None:
        if view is self.current():
            self.progress.setVisible(done < total)
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def update_status(self) -> None:
        """The step (its seq) and the row (N of M), tokens, cost, checksum state, format."""
        view = self.current()
        labels = self.status_labels
        tl = view.session.timeline if view is not None else None
        if view is None or tl is None or not len(tl) or view.doc is None:
            for label in labels.values():
                label.setText("")
            return
        step = view.session.step
        labels["step"].setText(
            f"{step_label(tl, step)} · {step + 1} of {len(tl)}"
            + ("" if view.complete else " (loading…)")
        )
        labels["tokens"].setText(
            f"tokens {tl.cum_tokens[step]:,} / {tl.input_tokens + tl.output_tokens:,}"
        )
        spent = "?" if not tl.cost_known else (format_cost(tl.cum_cost[step]) or "$0")
        here, total = tl.cost_text(step), tl.cost_text()
        labels["cost"].setText(
            f"cost {spent} / {total}"  # an offline run's step: said once
            + (f" (step {here})" if here and here != total else "")
        )
        labels["cost"].setToolTip(provenance())
        state = view.checksum
        warn = state == "mismatch"
        labels["checksum"].setText("⚠ checksum MISMATCH" if warn else f"checksum {state}")
        labels["checksum"].setToolTip(
            "The file was modified after it was written: what it shows may not be what was recorded"
            if warn
            else ""
        )
        labels["checksum"].setStyleSheet("color: #c62828; font-weight: bold;" if warn else "")
        doc = view.doc
        warned = doc.warnings  # wrongly typed values, skipped lines: marked, listed on hover
        labels["format"].setText(
            format_label(doc)
            + (" · proxy" if doc.is_proxy else "")
            + (f" · ⚠ {len(warned)} warning(s)" if warned else "")
        )
        labels["format"].setToolTip("\n".join(warned))

    def addDockWidget(
        self,
        area: Qt.DockWidgetArea,
        dock: QDockWidget,  # noqa: N802 - Qt API
        *args: object,
    ) -> None:
        """A panel joins the panels already in its area as a tab (see :func:`join_area`)."""
        others = [
            d
            for d in self.findChildren(QDockWidget)
            if d is not dock and not d.isFloating() and self.dockWidgetArea(d) == area
        ]
        super().addDockWidget(area, dock, *args)
        join_area(self, area, dock, others)

    def _show_current(self) -> None:
        """The window title names the current tab (task switchers show it); no tab, no blank
        window: say how to open something."""
        index = self.tabs.currentIndex()
        if index >= 0:
            self.central.setCurrentWidget(self.tabs)
        elif self.seat.built or self.isVisible():  # (before it is shown: the seat builds it)
            page = self.seat.start_page()
            if page is not None:
                self.central.setCurrentWidget(page)
        if self.seat.built:
            self.library.start_page_shown(index < 0)
        self.setWindowTitle(
            f"{self.tabs.tabText(index)} — Loom Desktop" if index >= 0 else "Loom Desktop"
        )

    # -- helpers ----------------------------------------------------------------------------
    def _with_doc(self, fn: Callable[[DocumentView], object]) -> None:
        view = self.current()
        if view is not None:
            fn(view)

    def _focus_filter(self) -> None:
        def focus(view: DocumentView) -> None:
            view.filter_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
            view.filter_box.selectAll()

        self._with_doc(focus)

    def _remember_splitters(self, view: DocumentView) -> None:
        self.settings.splitters["main"] = view.splitter.sizes()
        self.settings.splitters["lower"] = view.lower_split.sizes()

    # -- drag and drop ---------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
        event.acceptProposedAction()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.demo is not None:
            self.demo.stop()
        self.proxy_manager.shutdown()
        self.otel.shutdown()
        self.seat.shutdown()
        self.forks.shutdown()
        self.doctor.shutdown()
        self.attached.shutdown()
        self.notifier.close()
        self.settings.set_geometry(self.saveGeometry())
        for view in self.documents():
            self._remember_splitters(view)
            view.shutdown()
        for i in range(self.tabs.count()):  # compare tabs: their workers' results are dropped
            other = self.tabs.widget(i)
            stop = getattr(other, "shutdown", None)
            if not isinstance(other, DocumentView) and callable(stop):
                stop()
        try:
            save_settings(self.settings)
        except OSError:
            pass  # settings are a convenience; never block quitting on them
        super().closeEvent(event)
