"""A live tab: a journal that is still being written, followed as it grows.

The tailer's thread only appends updates to a queue and pokes the GUI thread
once (a queued signal); the GUI thread drains everything that arrived in one go
and indexes the new effects in slices of at most ``SLICE`` per event-loop turn,
so a run writing thousands of steps per second never freezes the window. New
steps arrive in the step list as row inserts (the status bar's count with them);
the plot is refreshed at most every ``PLOT_MS``, however fast the run writes, and
soon after the run pauses. Why so rarely: redrawing the plot was half of the GUI
thread's work during a fast tail (axes and bars repainted in full), and a row that
arrives during a redraw waits for it (issue 14: write-to-row latency).
*Follow tail* keeps the last step selected until the user looks elsewhere; then
nothing moves under them until they press End or Follow. A follow move selects the
last step and renders its context in one slot, so the list, the cursor, the status
bar and the context never show different steps; it waits for the run to pause
``FOLLOW_QUIET_MS``, but never longer than ``FOLLOW_MAX_MS`` (a context nobody can
read at 200 steps/s would only slow the rows down).

Nothing the file holds may raise out of a slot: a line that cannot be read, or a
step that cannot be indexed, goes to the tab's banner (line number and cause) and
the following goes on with what comes after it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from loom_core.formats.document import Document
from loom_core.formats.foreign import ForeignReader
from loom_core.formats.journal import JournalState, journal_document
from loom_core.formats.save import save_document
from loom_core.live.live_status import ENDED, HUMAN
from loom_core.live.reread import IDLE, RereadFollower, RereadUpdate
from loom_core.live.tail import JournalTailer, JournalUpdate
from loom_core.views.timeline import TimelineBuilder
from loom_desktop.document.live_banner import LiveBar, ProblemBanner
from loom_desktop.document.live_reread import IndexedReread, indexed
from loom_desktop.document.live_shield import LiveShield
from loom_desktop.document.session import Session
from loom_desktop.document.step_list_model import StepListModel
from loom_desktop.infra.services import WindowServices

if TYPE_CHECKING:  # the plot (and pyqtgraph) is imported when a tab first shows one
    from loom_desktop.widgets.timeline import TimelineWidget


class LiveHost(QWidget):
    """A tab a live controller can grow: the widget it lives in and reports to (the
    document view is one, by subclassing this).

    Why a base class here: the tab owns its live controller, so the controller naming the
    tab's class would make the two modules import each other; a Protocol cannot also be
    the QWidget the controller parents its timers and dialogs to."""

    path: str
    doc: Any
    session: Session
    model: StepListModel
    timeline_widget: TimelineWidget

    def live_failed(self, cause: str) -> None:
        """Show that the journal can no longer be read as a run (a banner, kept data)."""
        raise NotImplementedError

    def timeline_grew(self) -> None:
        """New rows exist: let the list and status bar count them now."""
        raise NotImplementedError

    def shows_current(self) -> bool:
        """True when the context view already shows the current step."""
        raise NotImplementedError

    def render_now(self) -> None:
        """Draw the current step's context without waiting for the debounce."""
        raise NotImplementedError


SLICE = 500  # effects indexed per event-loop turn (a few ms of work)
UI_MS = 100  # the live bar and listeners of ``changed`` at most 10 times a second
FOLLOW_QUIET_MS = 300  # Follow tail moves once the run pauses this long…
FOLLOW_MAX_MS = 2000  # …or at the latest this long after its previous move
PLOT_MS = 1000  # while steps keep coming, the plot (a full redraw) at most once a second…
PLOT_PAUSED_MS = 250  # …and when the run pauses, as soon as this long after the last redraw
SETTLED = (*ENDED, HUMAN, IDLE)  # statuses in which nothing is being written (see settled)
log = logging.getLogger(__name__)


class _Bridge(QObject):
    """Lives in the GUI thread; the tailer thread only queues and emits ``arrived``."""

    arrived = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.queue: deque[JournalUpdate] = deque()
        self._poked = threading.Event()

    def push(self, update: JournalUpdate) -> None:  # runs on the tailer thread
        self.queue.append(update)
        if not self._poked.is_set():
            self._poked.set()
            self.arrived.emit()

    def take(self) -> list[JournalUpdate]:
        self._poked.clear()
        taken = []
        while self.queue:
            taken.append(self.queue.popleft())
        return taken


class LiveController(QObject):
    """Turns journal updates into timeline growth for one tab (a :class:`LiveHost`).

    With a ``reader``, the tab follows a foreign-format file instead: whole re-reads
    (:mod:`loom_core.live.reread`), indexed on the tailer's thread
    (:mod:`~loom_desktop.document.live_reread`) and swapped in here."""

    changed = Signal()

    def __init__(
        self, view: LiveHost, poll_interval: float = 0.5, reader: ForeignReader | None = None
    ) -> None:
        super().__init__(view)
        self.view = view
        self.reader = reader
        self.bar = LiveBar()
        self.banner = ProblemBanner()  # unreadable lines, steps that cannot be shown
        self.status = "waiting"
        self.error: str | None = None
        self.doc: Document | None = None
        self.builder: TimelineBuilder | None = None
        self.unfinished: tuple[Any, ...] = ()
        self.header: dict[str, Any] | None = None
        self.updates = 0
        self.rewrites = 0  # times the file was rewritten under us (resume, recover, fork)
        self.detail = ""  # how the status is known, when it says the writer is gone
        self._stuck = False  # a step could not be indexed: the timeline stops growing there
        self._following_move = False
        self._bridge = _Bridge(self)
        self._bridge.arrived.connect(self._drain)
        self._slice_timer = QTimer(self, singleShot=True, interval=0)
        self._slice_timer.timeout.connect(self._index_slice)
        self._ui_timer = QTimer(self, singleShot=True, interval=UI_MS)
        self._ui_timer.timeout.connect(self._refresh_ui)
        self._plot_clock = QElapsedTimer()
        self._steps_at_ui = 0  # steps at the last UI refresh: none since means the run paused
        self._follow_timer = QTimer(self, singleShot=True)
        self._follow_timer.timeout.connect(self._follow_to_end)
        self._follow_clock = QElapsedTimer()  # since the last follow move
        if reader is None:
            self.tailer = JournalTailer(view.path, self._bridge.push, poll_interval=poll_interval)
        else:
            self.tailer = JournalTailer(
                view.path,
                lambda update: self._bridge.push(indexed(update)),
                poll_interval=poll_interval,
                follower=RereadFollower(view.path, reader),
            )
        self.shield = LiveShield(view.path)  # a proxy's decisions, from its sidecar
        self.bar.follow.toggled.connect(self._follow_toggled)
        self.bar.save.clicked.connect(self.save_dialog)

    @property
    def settled(self) -> bool:
        """Nothing is being written now: the run ended, waits for a human, or a followed
        foreign file went idle. The window then lets the run library read it (it leaves a
        live run to its tab while it grows)."""
        return self.status in SETTLED

    @property
    def following(self) -> bool:
        return self.bar.follow.isChecked()

    def start(self) -> None:
        self.tailer.start()

    def writer_running(self) -> None:
        """The app's own writer of this journal (a proxy, the demo) runs: the run is still
        being written, even when its last turn was answered."""
        self.tailer.writer_running()

    def writer_stopped(self, why: str, failed: bool = False) -> None:
        """The app's own writer of this journal (a proxy, the demo) is gone: an
        unfinished run then says "stopped without finishing" instead of running, and
        "failed" when ``failed`` (the demo's agent crashed)."""
        self.tailer.writer_stopped(why, failed)

    def stop(self) -> None:
        """Stop the tailer thread and the timers (the tab is closing)."""
        self.tailer.stop(5.0)
        self._slice_timer.stop()
        self._ui_timer.stop()
        self._follow_timer.stop()

    # -- applying updates ----------------------------------------------------------------
    def _drain(self) -> None:
        for update in self._bridge.take():
            if self.error is not None:
                return  # the tab is being closed with an error dialog
            try:
                self.apply(update)
            except Exception as err:  # noqa: BLE001 - never into Qt: say it, keep what we had
                log.exception("live tab %s: an update could not be applied", self.view.path)
                self.banner.add_note(
                    f"An update of the journal could not be shown "
                    f"({type(err).__name__}: {err}); later lines are followed."
                )
        self._index_slice()

    def apply(self, update: JournalUpdate) -> None:
        """Fold one update into the live document (indexing happens in slices)."""
        self.updates += 1
        if update.rewritten:
            self.banner.clear()  # a new run: the old one's bad lines are not its own
        if update.error:
            self.error = update.error
            self.view.live_failed(update.error)
            return
        if isinstance(update, RereadUpdate):
            self._apply_reread(update)
            return
        if update.rewritten or self.doc is None:
            self._reset(update.header, list(update.new_effects), list(update.new_entries))
        elif update.header != self.header:
            # The header came after the rewrite was seen (the file was caught empty):
            # episodes decide where user steps go, so index the run again with it.
            assert self.doc.entries is not None
            self._reset(
                update.header,
                [*self.doc.effects, *update.new_effects],
                self.doc.entries + list(update.new_entries),
            )
        else:
            assert isinstance(self.doc.effects, list)  # a journal's: it grows
            self.doc.effects.extend(update.new_effects)
            assert self.doc.entries is not None
            self.doc.entries.extend(update.new_entries)
        self.unfinished = update.unfinished
        self.header = update.header
        self.status, self.detail = update.status, update.detail
        if update.rewritten and self.updates > 1:
            self.rewrites += 1
            stamp = time.strftime("%H:%M:%S")
            self.bar.rewrites.setText(f"· rewritten {self.rewrites}× (last at {stamp})")
        self.banner.add_lines(update.unreadable)
        for problem in update.problems:
            self.banner.add_note(problem)
        self.bar.show_status(self.status, self.status not in ENDED, self.detail)

    def _apply_reread(self, update: RereadUpdate) -> None:
        """A foreign file's re-read: swap in its (already indexed) run, keeping the step."""
        for problem in update.problems:
            self.banner.add_note(problem)
        builder = update.builder if isinstance(update, IndexedReread) else None
        if builder is not None:
            grew = self.builder is None or len(builder.tl) > len(self.builder.tl)
            self.doc = self.view.doc = builder.tl.doc
            self.builder = builder
            self._following_move = True  # a re-read is not the user looking away
            try:
                self.view.session.set_timeline(builder.tl)
            finally:
                self._following_move = False
            if grew:
                self.view.timeline_grew()
                if self.following:
                    self._schedule_follow()
        self.unfinished = update.unfinished
        self.status, self.detail = update.status, update.detail
        # idle is still followed (a session can go on at any time): live, in grey
        self.bar.show_status(self.status, self.status not in ENDED, self.detail)
        self.bar.save.setEnabled(self.doc is not None)  # a foreign run saves as it is now

    def _reset(self, header: dict[str, Any] | None, effects: list[Any], entries: list[Any]) -> None:
        self._stuck = False
        state = JournalState(header=header, effects=effects, entries=entries)
        self.doc = self.view.doc = journal_document(state, self.view.path)
        for warning in self.doc.warnings:  # header members of the wrong type, shown raw
            self.banner.add_note(warning)
        if self.shield.proxy:  # labelled as the finished trace will be
            self.doc.header.recorded_via = "proxy"
        self.builder = TimelineBuilder(self.doc)
        self._following_move = True  # a reset is not the user looking away
        try:
            self.view.session.set_timeline(self.builder.tl)
        finally:
            self._following_move = False

    def _index_slice(self) -> None:
        builder, doc = self.builder, self.doc
        if builder is None or doc is None or self._stuck:
            return
        done = builder.walker.done
        upto = min(len(doc.effects), done + SLICE)
        last = upto >= len(doc.effects)
        before = len(builder.tl)
        try:
            builder.extend(upto, unfinished=bool(self.unfinished) and last)
        except Exception as err:  # noqa: BLE001 - never into Qt: say it, keep what we had
            log.exception("live tab %s: indexing failed", self.view.path)
            self._stuck, last = True, True
            self.banner.add_note(
                f"Only the first {builder.walker.done} effects can be shown; "
                f"the next one fails ({type(err).__name__}: {err})."
            )
        if len(builder.tl) > before:
            self.view.timeline_grew()  # rows and their count appear now
            self._repaint(self.shield.refresh(builder.tl))
            if self.following:
                self._schedule_follow()
        if not last:
            self._slice_timer.start()
        if not self._ui_timer.isActive():
            self._ui_timer.start()

    def _repaint(self, steps: set[int]) -> None:
        """Rows whose shield decisions changed (the plot follows with its next refresh)."""
        model = self.view.model
        for row in filter(lambda r: r >= 0, map(model.row_of, steps)):
            model.dataChanged.emit(model.index(row, 0), model.index(row, model.columnCount() - 1))

    def _refresh_ui(self) -> None:
        steps = len(self.builder.tl) if self.builder is not None else 0
        paused, self._steps_at_ui = steps == self._steps_at_ui, steps
        due = PLOT_PAUSED_MS if paused else PLOT_MS
        if not self._plot_clock.isValid() or self._plot_clock.elapsed() >= due:
            self._plot_clock.start()
            self._refresh_plot()
        else:
            self._ui_timer.start()  # come back for the plot
        self.changed.emit()

    def _refresh_plot(self) -> None:
        widget = self.view.timeline_widget
        if widget is not None and self.builder is not None:
            widget.set_timeline(self.builder.tl)
            widget.set_cursor(self.view.session.step)

    # -- follow tail ---------------------------------------------------------------------
    def _schedule_follow(self) -> None:
        """Move to the new last step once the run pauses, or when the last move is overdue."""
        since = self._follow_clock.elapsed() if self._follow_clock.isValid() else FOLLOW_MAX_MS
        self._follow_timer.start(max(0, min(FOLLOW_QUIET_MS, FOLLOW_MAX_MS - since)))

    def _follow_to_end(self) -> None:
        """Select the last step, draw it on the plot and render its context in one slot."""
        self._follow_timer.stop()
        self._follow_clock.start()
        self._following_move = True
        try:
            self.view.session.set_step(self.view.session.count - 1)
        finally:
            self._following_move = False
        if not self.view.shows_current():
            self.view.render_now()
        self._plot_clock.start()
        self._refresh_plot()

    def _follow_toggled(self, on: bool) -> None:
        if on:
            self._follow_to_end()

    def on_step(self, step: int) -> None:
        """Any step change the tail did not make turns following off (the user looked away)."""
        if not self._following_move and step < self.view.session.count - 1:
            self.bar.follow.setChecked(False)

    def follow(self) -> None:
        self.bar.follow.setChecked(True)

    # -- saving ------------------------------------------------------------------------
    def save_dialog(self) -> None:
        suggested = str(Path(self.view.path).with_suffix("")) + ".loom.json"
        path, _ = QFileDialog.getSaveFileName(
            self.view, "Save run as trace", suggested, "Loom traces (*.loom.json)"
        )
        if not path:
            return
        try:
            self.save_to(path)
        except (OSError, ValueError) as err:
            cause = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            self._tell(f"Cannot save the run to {path}: {cause}", error=True)
            return
        self._tell(f"Run saved as a trace: {path}")

    def _tell(self, message: str, error: bool = False) -> None:
        """Say what a save did: in the window's status bar, and in a dialog if it failed."""
        window = self.view.window()
        if not isinstance(window, WindowServices):
            if error:  # a tab outside a main window (tests): the dialog all the same
                box = QMessageBox(
                    QMessageBox.Icon.Critical,
                    "Cannot save the run",
                    message,
                    QMessageBox.StandardButton.Ok,
                    window,
                )
                box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
                box.open()
            return
        window.show_status(message, 20_000)
        if error:
            window.report_error("Cannot save the run", message, parent=self.view)

    def snapshot(self) -> Document:
        """The run as recorded so far, with its current header and unfinished intents."""
        if self.doc is None:
            raise ValueError("nothing recorded yet")
        if self.reader is not None:  # a foreign run: each re-read is a whole document
            return self.doc
        assert self.doc.entries is not None
        state = JournalState(
            header=self.header,
            effects=list(self.doc.effects),
            entries=list(self.doc.entries),
            pending={u.seq: u for u in self.unfinished},
        )
        return journal_document(state, self.view.path)

    def save_to(self, path: str) -> dict[str, Any]:
        """Write what was recorded so far as a loom-compatible trace (``convert``)."""
        return save_document(self.snapshot(), path)
