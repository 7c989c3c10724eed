"""One open document as a tab: timeline on top, step list and context view below.

Loading runs in a worker: a preview of the first steps is shown as soon as it is
parsed, the full run replaces it when ready. The checksum, which needs a full
canonical re-serialisation, runs in a separate process so it never competes
with the window for the interpreter lock; a mismatch is a warning, not a refusal.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QProcess, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from loom_core.errors import LoadError
from loom_core.formats.foreign import ForeignReader
from loom_core.formats.loader import open_run
from loom_core.formats.progressive import Cancelled, Loaded, load_progressive
from loom_core.formats.reader import Opening
from loom_core.formats.trace import checksum_state
from loom_core.library.cache import is_cached
from loom_core.live.reread import is_live_file
from loom_core.views.filtering import filter_message, filter_steps, prepare_filter
from loom_desktop.document.filter_batches import FilterBatches
from loom_desktop.document.live_view import LiveController, LiveHost
from loom_desktop.document.plot_steps import Steps
from loom_desktop.document.sample_bar import SampleBar, samples_of
from loom_desktop.document.session import Session
from loom_desktop.document.step_list_model import COL_SUMMARY, StepListModel, column_widths
from loom_desktop.document.step_table import StepTable
from loom_desktop.document.text_index_task import TextIndexer
from loom_desktop.infra import gc_policy
from loom_desktop.infra.activity import USER
from loom_desktop.infra.background_import import plot_modules
from loom_desktop.infra.child import BACKGROUND, module_command
from loom_desktop.infra.later import AfterPaint, call_later
from loom_desktop.infra.workers import Task
from loom_desktop.keys import FILTER_KEYS, STEP_KEYS, bind
from loom_desktop.widgets.context_view import ContextView

PLAY_MS = 400
PREPARE_POLL_MS = 2  # the plot's build waits for its arrays' worker, looking this often
SHOWN_LATEST_MS = 2000  # what waits for the plot's first paint starts by then regardless
STEP_LIST_MIN_CHARS = 36  # widths in average characters: they follow the font
CONTEXT_MIN_CHARS = 30
SUMMARY_CHARS = 24  # the summary column's share of the step list's first width


def _empty_document(opening: Opening | None) -> bool:
    """An existing file with nothing but white space, not named like a journal."""
    if opening is None or opening.path.endswith(".jsonl"):
        return False
    return not opening.head[: 1 << 16].strip()


class DocumentView(LiveHost):
    """A tab: owns its session, its workers and its checksum process."""

    loaded = Signal()
    failed = Signal(object)
    status_changed = Signal()
    progressed = Signal(int, int)
    timeline_built = Signal()  # the plot exists now (features add to its menu)
    plot_shown = Signal()  # its first paint is on the screen (see _plot_painted)

    def __init__(self, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.session = Session(self)
        self.doc: Any = None
        self.complete = False
        self.checksum = "checking…"
        self.live: Any = None  # a LiveController when the document is a journal being written
        self.sample_bar: SampleBar | None = None  # when the file holds several runs
        self._build()
        self._wire()
        self._load_task = Task(self)
        self._load_task.finished.connect(self._on_loaded)
        self._load_task.failed.connect(self._on_failed)
        self._load_task.progressed.connect(self.progressed)
        self._load_task.partial.connect(self._on_head)
        self._filter_task = Task(self)
        self._filter_task.finished.connect(self._on_filtered)
        self._filter_task.failed.connect(self._on_filter_failed)
        self._filter_task.partial.connect(self._on_filter_batch)
        self._prepare_task = Task(self)  # the filter's kind-name column, built as typing starts
        self._indexer = TextIndexer(self)  # the text filter's index, once the plot is shown
        self._prepared = 0  # id() of the timeline it was started for
        self._checksum_proc: QProcess | None = None

    # -- layout -----------------------------------------------------------------------
    def _build(self) -> None:
        self.timeline_widget: Any = None  # built after the first paint (see ensure_timeline)
        self._plot_steps: Steps | None = None  # its build, a part per event-loop turn
        self._new_plot: Any = None  # the plot being built (placed once it is fed)
        self._plot_waits: AfterPaint | None = None
        self.plot_is_shown = False  # the placed plot has painted on the screen
        self.filter_box = QLineEdit(
            placeholderText="Filter: text, kind:model, tool:read*, is:error…"
        )
        self.filter_box.setClearButtonEnabled(True)
        self.filter_note = QLabel(wordWrap=True)  # problems, no match, counts
        self.filter_note.setVisible(False)
        self._filter_text = ""  # the query of the filter task in flight
        self._streamed = False  # the filter in flight has shown matches already
        self._enter_pending = False  # Enter was pressed: go to the first match once filtered
        self.model = StepListModel(self)
        self.table = StepTable()
        self.table.use_model(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(
            COL_SUMMARY, QHeaderView.ResizeMode.Stretch
        )
        widths = column_widths(self.table.fontMetrics())
        for col, width in widths.items():
            self.table.setColumnWidth(col, width)
        self.table.setWordWrap(False)
        self.context_view = ContextView()
        left = QWidget()
        lay = QVBoxLayout(left)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.filter_box)
        lay.addWidget(self.filter_note)
        lay.addWidget(self.table)
        self.lower_split = QSplitter(Qt.Orientation.Horizontal, childrenCollapsible=False)
        self.lower_split.addWidget(left)
        context = QWidget()  # the context view, and above it the filter's word on its step
        pane = QVBoxLayout(context)
        pane.setContentsMargins(0, 0, 0, 0)
        pane.setSpacing(2)
        pane.addWidget(self.context_view.hidden_note)
        pane.addWidget(self.context_view, 1)
        self.lower_split.addWidget(context)
        self._size_step_list(left, sum(widths.values()))
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(QWidget())  # placeholder until the plot exists
        self.splitter.addWidget(self.lower_split)
        self.splitter.setSizes([230, 560])
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.splitter)

    def _size_step_list(self, left: QWidget, fixed: int) -> None:
        """The step list keeps its width when a dock or a narrower window takes space
        (the context view gives way first), and never gets too narrow to read: a dock
        must not squeeze it to "c…". The minimums are small enough that showing a
        panel never forces the window to grow."""
        char = self.table.fontMetrics().horizontalAdvance("x")
        chrome = self.table.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent) + 4
        left.setMinimumWidth(STEP_LIST_MIN_CHARS * char + chrome)
        self.context_view.setMinimumWidth(CONTEXT_MIN_CHARS * char)
        self.lower_split.setStretchFactor(0, 0)
        self.lower_split.setStretchFactor(1, 1)
        self.lower_split.setSizes([fixed + SUMMARY_CHARS * char + chrome, 680])

    def _wire(self) -> None:
        s = self.session
        s.timeline_changed.connect(self._on_timeline)
        # background work in this process waits while the user moves or scrolls
        s.step_changed.connect(USER.touch)
        self.table.verticalScrollBar().valueChanged.connect(USER.touch)
        s.step_changed.connect(self._on_step)
        self.context_view.step_link_clicked.connect(s.set_step)
        self.table.selectionModel().currentRowChanged.connect(
            lambda cur, _prev: s.set_step(self.model.step_at(cur.row())) if cur.isValid() else None
        )
        self._filter_timer = QTimer(self, singleShot=True, interval=150)
        self._filter_timer.timeout.connect(self._run_filter)
        self.filter_box.textChanged.connect(lambda _t: self._filter_timer.start())
        self.filter_box.textChanged.connect(self._prepare_filter)
        self._render_timer = QTimer(self, singleShot=True, interval=0)
        self._render_timer.timeout.connect(self._render_context)
        self._shown: tuple[Any, int] | None = None  # (timeline, step) the context view shows
        self.play_timer = QTimer(self, interval=PLAY_MS)
        self.play_timer.timeout.connect(self._play_tick)
        bind(
            self,
            STEP_KEYS,
            {
                "Left": lambda: s.move(-1),
                "Right": lambda: s.move(1),
                "Home": lambda: s.set_step(0),
                "End": self.go_end,
                "Space": self.toggle_play,
                ".": lambda: self.jump_same_kind(1),
                ",": lambda: self.jump_same_kind(-1),
            },
        )
        # Ctrl+F is the window's View ▸ Filter Steps: a second binding here made both dead.
        bind(
            self.filter_box,
            FILTER_KEYS,
            {"Return": self._filter_entered, "Escape": self._filter_escaped},
        )
        self.filter_box.returnPressed.connect(self._filter_entered)  # the keypad's Enter

    def _import_plot(self) -> None:
        """The plot's modules are imported off the GUI thread, then the plot is built."""
        plot_modules().when_imported(self._build_plot)

    def _build_plot(self) -> None:
        self.ensure_timeline(staged=True)

    def ensure_timeline(self, staged: bool = False) -> None:
        """Build the plot. Deferred: importing pyqtgraph costs a third of a second, and
        the step list can be on screen before it. ``staged``: a part per event-loop turn
        (see :mod:`.plot_steps`), the widget placed once built and fed; otherwise (or
        when a staged build is under way) all of it now."""
        if self.timeline_widget is not None:
            return
        if self._plot_steps is None:
            self._plot_steps = Steps(self, self._plot_parts(), self._place_plot)
        if not staged:
            self._plot_steps.finish()

    def _plot_parts(self) -> Iterator[int | None]:
        """The plot built, warmed and fed off screen, in steps (the placeholder shows);
        what it is fed is computed meanwhile in a worker (see :func:`prepare`)."""
        from loom_desktop.widgets.timeline import TimelineWidget
        from loom_desktop.widgets.timeline_data import prepare

        loaded = self.session.timeline
        ahead = Task(self)  # a loaded run no longer grows: a worker may read its arrays
        ready: list[Any] = []
        ahead.finished.connect(ready.append)
        widget = self._new_plot = TimelineWidget(staged=True)
        yield None
        yield from widget.build_steps()
        placeholder = self.splitter.widget(0)
        if placeholder is not None:  # warmed at the size it will be shown at
            widget.resize(placeholder.size())
        yield None
        widget.grab()  # its first paint, off screen: fonts, tick texts and Qt types made
        yield None
        # The worker starts once the plot is built, not beside its build: each part of the
        # build is 15-35 ms of this thread's CPU, and with the worker's numpy passes taking
        # the interpreter lock in between, a turn of the event loop lasted 50-80 ms at
        # 1,000,000 steps. Meanwhile this thread only polls.
        if loaded is not None and self.complete and self.live is None:
            ahead.start(lambda _ctx: prepare(loaded))
        while ahead.running and not self._hurried():
            yield PREPARE_POLL_MS
        tl = self.session.timeline
        if tl is not None:
            yield from widget.feed_steps(tl, ready[0] if ready else None)
            widget.set_matches(self.model.rows)
            yield None
            # Painted again off screen, fed: the axes measure the run's tick texts and take
            # their widths now. Else the first paint on the screen widened them, the plot
            # laid out again and painted a second time in the same turn (30 ms of CPU at
            # 100,000 steps, on top of the first).
            widget.grab()
            yield None

    def _hurried(self) -> bool:
        return self._plot_steps is not None and self._plot_steps.hurried

    def _place_plot(self) -> None:
        widget, self._new_plot = self._new_plot, None
        widget.step_requested.connect(self.session.set_step)
        widget.getPlotItem().getViewBox().sigRangeChangedManually.connect(USER.touch)
        sizes = self.splitter.sizes()
        old = self.splitter.replaceWidget(0, widget)
        if old is not None:
            old.deleteLater()
        self.splitter.setSizes(sizes)
        self.timeline_widget = widget
        if self.session.timeline is not None:
            if widget.timeline is not self.session.timeline:  # another run came meanwhile
                widget.set_timeline(self.session.timeline)
            widget.set_matches(self.model.rows)
            widget.set_cursor(self.session.step)
        self.timeline_built.emit()
        if widget.isVisible():
            AfterPaint(widget.viewport(), self._plot_painted)
            call_later(SHOWN_LATEST_MS, self, self._plot_painted)  # a window never painted
        else:  # a tab in the background, a window not on screen: nothing will paint it
            self._plot_painted()

    def _plot_painted(self) -> None:
        """The plot is on the screen: what waited for it starts now (the text index here,
        the run library through ``plot_shown``). Started as the plot was placed, their
        threads took the interpreter lock and a core from its first paint, the longest
        stall of a big run's open (at 100,000 effects: 35 ms of GUI CPU in 179-430 ms of
        wall time, the library's database writes and the index's sampling running)."""
        if self.plot_is_shown:
            return
        self.plot_is_shown = True
        self.plot_shown.emit()
        self._index_text()

    def _index_text(self) -> None:
        """Build (or map) the text filter's index of a loaded run, once its plot is shown:
        after the first paint and the plot, never competing with them."""
        timeline = self.session.timeline
        if self.complete and self.live is None and timeline is not None:
            self._indexer.start(timeline)

    # -- loading -----------------------------------------------------------------------
    def start_loading(self, watch: bool = False) -> None:
        """Load in the background (or follow, for a journal); ``loaded`` or ``failed`` follows.

        ``watch``: the user asked to follow this path (File ▸ Watch Journal…, a Claude Code
        session, which its writer appends to without keeping it open), so an empty or
        missing file is waited for and a foreign file is followed even while nothing
        writes it. Otherwise an empty file is an error unless
        it is named like a journal (``*.jsonl``: a proxy's journal starts empty); a
        trace is written whole, so an empty ``*.loom.json`` will never become one.
        """
        try:
            opening = open_run(self.path)  # the one decision: this reader does the load
            if not watch and _empty_document(opening):
                raise LoadError(self.path, "the file is empty")
        except LoadError as exc:
            self._refused = exc
            call_later(0, self, self._report_refused)  # after the caller has connected
            return
        if opening is None or opening.reader.tail:
            self.start_live()  # (a missing file: a journal yet to be written)
            return
        reader = opening.reader
        # a foreign format: live while it is being written; a copy fetched from a team's run
        # store was just written by the download, never by its agent
        if reader.follow and (watch or (is_live_file(self.path) and not is_cached(self.path))):
            self.start_live(reader=reader)
            return
        self._load_task.start(
            lambda ctx: gc_policy.loading(
                lambda: load_progressive(opening, ctx.partial, ctx.progress, ctx.cancelled)
            )
        )

    def start_live(self, poll_interval: float = 0.5, reader: ForeignReader | None = None) -> None:
        """Follow the journal as it is written (it may not exist yet); with ``reader``, a
        foreign-format file, re-read whole as it grows."""
        self.live = LiveController(self, poll_interval, reader)
        lay = self.layout()
        assert isinstance(lay, QVBoxLayout)  # built in __init__
        lay.insertWidget(0, self.live.bar)
        lay.insertWidget(1, self.live.banner)
        self.live.changed.connect(self._live_changed)
        self.checksum = "absent"
        self.ensure_timeline()
        # What is alive now (the window, the plot, their modules) lives as long as the tab:
        # frozen, as a loaded run's objects are, the collections on the GUI thread walk only
        # what the tail adds. Unfrozen, each full one walked the whole process (measured at
        # a tail's end: 21-28 ms of CPU over 80,800 objects, 0.7-0.8 ms frozen), a wait for
        # the rows of a fast tail (until the tab is destroyed).
        gc_policy.hold(self)
        self.live.start()

    def _report_refused(self) -> None:
        self.failed.emit(self._refused)

    def _live_changed(self) -> None:
        if not self.complete and self.live.doc is not None:
            self.complete = True
            self.doc = self.live.doc
            self.loaded.emit()
        self.doc = self.live.doc or self.doc
        self.status_changed.emit()

    def live_failed(self, cause: str) -> None:
        """The followed file cannot be read as a journal: report it like a failed open."""
        self.live.stop()
        self.failed.emit(LoadError(self.path, cause))

    def timeline_grew(self) -> None:
        """A live timeline gained steps: announce rows; refilter if a filter is active.

        Everything that counts rows or points at the current step is brought in step in
        this same slot (the status bar's "i of M", the current step's row when it only
        now exists, the context of a step that had no row yet): a user never sees the
        list, the context and the status bar disagree."""
        following = self.live is not None and self.live.following
        self.table.show_appended(self.model, following)  # scrolled to when following
        self._select_row(self.session.step)
        if not self.shows_current():
            self.render_now()
        if self.filter_box.text().strip():
            self._filter_timer.start()
        self.status_changed.emit()

    def go_end(self) -> None:
        """End: the last step, and back to following the tail of a live run."""
        self.session.set_step(self.session.count - 1)
        if self.live is not None:
            self.live.follow()

    def load_now(self) -> None:
        """Load synchronously (screenshots and tests that want no event loop)."""
        self.ensure_timeline()
        self._on_loaded(load_progressive(self.path))

    def _on_head(self, head: object) -> None:
        if not self.complete and isinstance(head, Loaded):
            self._show(head)

    def _on_loaded(self, result: Loaded) -> None:
        self.complete = True
        self._show(result)
        # The run's objects live as long as the tab: keep the collector from rescanning
        # them on every collection (a full pass over a big trace stalls scrubbing),
        # until the tab is destroyed (see gc_policy).
        gc_policy.hold(self)
        self.loaded.emit()
        self._check_checksum()
        if self.plot_is_shown:  # the plot came first (else: once it is shown)
            self._index_text()

    def _show(self, result: Loaded) -> None:
        self.doc = result.doc
        self.session.set_timeline(result.timeline)
        if result.complete and (self.sample_bar is not None or samples_of(result.doc)):
            self._offer_samples()

    def _offer_samples(self) -> None:
        """The sample bar, when the file holds several runs (an Inspect AI log)."""
        if self.sample_bar is None:
            self.sample_bar = SampleBar(self.path, self.show_other_run, self)
            lay = self.layout()
            assert isinstance(lay, QVBoxLayout)  # built in __init__
            lay.insertWidget(0, self.sample_bar)
        self.sample_bar.show_document(self.doc)

    def show_other_run(self, result: Loaded) -> None:
        """Show another run of the same file (another sample) in this tab, from its start."""
        self.session.step = 0
        self._show(result)

    def _on_failed(self, exc: object) -> None:
        if isinstance(exc, Cancelled):
            return
        self.failed.emit(exc)

    def _check_checksum(self) -> None:
        if self.doc is None or self.doc.format != "trace" or not self.doc.header.checksum:
            self.checksum = "absent"
            self.status_changed.emit()
            return
        self._stop_checksum()
        proc = QProcess(self)
        proc.finished.connect(
            lambda *_: self._on_checksum(proc) if proc is self._checksum_proc else None
        )
        self._checksum_proc = proc
        proc.start(*module_command(BACKGROUND, "checksum", self.path))  # yields the CPU to us

    def _on_checksum(self, proc: QProcess) -> None:
        try:
            out = bytes(proc.readAllStandardOutput().data()).decode().strip()
        except RuntimeError:  # torn down with the application: nobody to tell
            return
        self.checksum = out if out in ("valid", "mismatch", "absent") else "unknown"
        self._checksum_proc = None
        proc.deleteLater()
        self.status_changed.emit()

    def check_checksum_now(self) -> None:
        """Synchronous checksum (screenshot mode)."""
        self.checksum = checksum_state(self.doc) if self.doc is not None else "absent"
        self.status_changed.emit()

    # -- reacting ----------------------------------------------------------------------
    def _on_timeline(self, timeline: Any) -> None:
        self.model.set_timeline(timeline)
        if self.timeline_widget is not None:
            self.timeline_widget.set_timeline(timeline)
        elif self._plot_waits is None and self.complete:
            # The plot once the whole run is here and its rows painted. Not for a big run's
            # head: its import and build then shared the interpreter lock with the loader,
            # freezing the window 0.4-0.7 s twice at 1,000,000 effects, for a plot of the
            # first 400 steps that the whole run replaces moments later.
            self._plot_waits = AfterPaint(self.table.viewport(), self._import_plot)
        if self.filter_box.text().strip():
            self._run_filter()
        self.status_changed.emit()

    def _on_step(self, step: int) -> None:
        if self.live is not None:
            self.live.on_step(step)
        if self.timeline_widget is not None:
            self.timeline_widget.set_cursor(step)
        shown = self._select_row(step)
        if shown:
            self.table.scrollTo(self.model.index(self.model.row_of(step), 0))
        filtered = self.model.rows is not None and 0 <= step < self.session.count
        self.context_view.set_filtered_out(self._filter_text if filtered and not shown else None)
        self._schedule_render()
        self.status_changed.emit()

    def _select_row(self, step: int) -> bool:
        """Make ``step``'s row the current one (quietly); False when no row shows it."""
        row = self.model.row_of(step)
        if row < 0:
            return False
        sel = self.table.selectionModel()
        if sel.currentIndex().row() != row:
            self.table.blockSignals(True)
            sel.setCurrentIndex(
                self.model.index(row, 0), sel.SelectionFlag.ClearAndSelect | sel.SelectionFlag.Rows
            )
            self.table.blockSignals(False)
        return True

    def _schedule_render(self) -> None:
        """Render on the next loop turn: holding an arrow key renders only where it stops.
        (Follow tail moves at its own pace and renders at once: see ``LiveController``.)"""
        if not self._render_timer.isActive():
            self._render_timer.start()

    def shows_current(self) -> bool:
        """Whether the context view shows the current step and no render is pending."""
        shown = self._shown
        return (
            not self._render_timer.isActive()
            and shown is not None
            and shown[0] is self.session.timeline
            and shown[1] == self.session.step
        )

    def render_now(self) -> None:
        """Render the context of the current step now, in this slot."""
        self._render_timer.stop()
        self._render_context()

    def flush_render(self) -> None:
        """Render the context view now if a render is pending (benchmarks, screenshots)."""
        if self._render_timer.isActive():
            self.render_now()

    def _render_context(self) -> None:
        tl, step = self.session.timeline, self.session.step
        if tl is not None:
            self.context_view.show_step(tl, step)
            self._shown = (tl, step) if step < len(tl) else None  # else: blank, not the step

    def _run_filter(self) -> None:
        tl = self.session.timeline
        if tl is None:
            return
        text = self._filter_text = self.filter_box.text()
        self._streamed = False
        self._filter_task.start(
            lambda ctx: filter_steps(tl, text, ctx.cancelled, FilterBatches(ctx.partial))
        )

    def _prepare_filter(self, _text: str) -> None:
        """Typing started: build the filter's kind-name column meanwhile, once per timeline
        (a few hundred ms for a million steps, hidden by the typing and the debounce)."""
        tl = self.session.timeline
        if tl is not None and self._prepared != id(tl):
            self._prepared = id(tl)
            self._prepare_task.start(lambda _ctx: prepare_filter(tl))

    def _on_filter_batch(self, steps: Any) -> None:
        """Matches found so far: the first ones replace the old result, later ones add rows
        (the previous result stays until the new search has something to show)."""
        if not self._streamed:
            self._streamed = True
            self.model.set_rows(array("i", steps))
            self._select_row(self.session.step)
        else:
            self.model.append_rows(steps)

    def _filter_entered(self) -> None:
        """Enter in the filter box: on to the list, at the first match if the current step
        is filtered out (once a pending filter has run)."""
        self.table.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self._enter_pending = True
        if self._filter_timer.isActive():
            self._filter_timer.stop()
            self._run_filter()
        elif not self._filter_task.running:
            self._go_to_match()

    def _go_to_match(self) -> None:
        self._enter_pending = False
        if self.model.row_of(self.session.step) < 0 and self.model.rowCount():
            self.session.set_step(self.model.step_at(0))

    def _filter_escaped(self) -> None:
        """Escape: clear the filter; in an empty box, back to the step list."""
        if self.filter_box.text():
            self.filter_box.clear()
        else:
            self.table.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _on_filtered(self, rows: Any) -> None:
        shown = self.model.rows
        if self._streamed and rows is not None and shown is not None:
            self.model.append_rows(rows[len(shown) :])  # what came after the last batch
        else:
            self.model.set_rows(rows)
        if self._enter_pending:
            self._go_to_match()
        note, problem = filter_message(self._filter_text, rows, self.session.count)
        self.filter_note.setText(note)
        self.filter_note.setStyleSheet("color: #c62828;" if problem else "color: gray;")
        self.filter_note.setVisible(bool(note))
        if self.timeline_widget is not None:
            self.timeline_widget.set_matches(rows)
        self._on_step(self.session.step)

    def _on_filter_failed(self, exc: object) -> None:
        """A search that failed says so under the box and keeps the run open (it was
        reported as a failed open, which closed the tab: a text filter over 5,000,000 steps
        ran out of memory building its text column, issue 24); the list keeps its rows."""
        if isinstance(exc, Cancelled):
            return
        cause = "ran out of memory" if isinstance(exc, MemoryError) else f"{type(exc).__name__}"
        detail = "" if isinstance(exc, MemoryError) else f": {exc}"
        self.filter_note.setText(f"The filter stopped: {cause}{detail}")
        self.filter_note.setStyleSheet("color: #c62828;")
        self.filter_note.setVisible(True)

    # -- navigation ----------------------------------------------------------------------
    def toggle_play(self) -> None:
        if self.play_timer.isActive():
            self.play_timer.stop()
        else:
            self.play_timer.start()

    def _play_tick(self) -> None:
        if self.session.step >= self.session.count - 1:
            self.play_timer.stop()
        else:
            self.session.move(1)

    def jump_same_kind(self, direction: int) -> None:
        tl = self.session.timeline
        if tl is None:
            return
        prev, nxt = tl.steps_of_kind(self.session.step)
        target = nxt if direction > 0 else prev
        if target is not None:
            self.session.set_step(target)

    def show_context_item(self, step: int, effect: int | None, episode: int | None = None) -> None:
        """Go to ``step`` and mark the message of ``effect`` (or ``episode``) in the context
        view: the doctor panel's jump. Rendered now, so the mark can be scrolled to."""
        self.session.set_step(step)
        self.flush_render()
        self.context_view.highlight_effect(effect, episode)

    # -- shutdown ----------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop everything this tab started (workers, timers, the tailer, the checksum process)."""
        if self.live is not None:
            self.live.stop()
        self.play_timer.stop()
        self._filter_timer.stop()
        self._render_timer.stop()
        self._load_task.cancel()
        self._filter_task.cancel()
        self._prepare_task.cancel()
        self._indexer.cancel()
        self._stop_checksum()

    def _stop_checksum(self) -> None:
        proc, self._checksum_proc = self._checksum_proc, None
        if proc is not None:
            proc.kill()
            proc.waitForFinished(2000)
            proc.deleteLater()
