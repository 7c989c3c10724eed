"""The run library in the main window: the start page, the View ▸ Runs dock, opening hits.

Kept out of main_window.py: the window only creates this and tells it when a run loaded.
A hit opens its run at its step with the search's step terms in the tab's filter, so the
matching steps are marked in the list; run keys (``model:``, ``after:``, ``before:``) are
left out, since the step filter has no such key. ``tool:NAME`` means the same in both (the
tool's steps and the model steps that called it), so a hit on the calling model step stays
listed. A run already open in a tab is shown there, not opened again. The search matches
whole words and the filter text anywhere in a step, so the filter can show more steps than
the search found (or, rarely, fewer: a phrase across punctuation, a letter with an accent,
text past what the library indexes): the status bar says why when a text term is carried.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QLabel, QMenu, QVBoxLayout, QWidget

from loom_core.library.cache import is_cached
from loom_core.library.query import RUN_KEYS, word_note
from loom_core.library.scan import JOURNAL, TRACE, default_folders
from loom_core.views.steps import step_of_seq
from loom_desktop.features.library.controller import LibraryController
from loom_desktop.features.library.page import RunsPage
from loom_desktop.features.library.settings_dialog import LibraryDialog, chosen_address
from loom_desktop.infra.settings import save_settings
from loom_desktop.resources import sample_trace

_TERM = re.compile(r'"[^"]*"|\S+')
NOTE_MS = 30_000  # how long the status bar says why the filter shows more than the search


def step_terms(query: str) -> str:
    """The search without its run keys: what the tab's step filter understands."""
    kept = [
        t
        for t in _TERM.findall(query)
        if t.partition(":")[0].lower() not in RUN_KEYS or ":" not in t
    ]
    return " ".join(kept)


def _same_file(a: str, b: str) -> bool:
    return a == b or Path(a).resolve() == Path(b).resolve()


class LibraryUi:
    """Owns the library controller and its two pages; see the module docstring."""

    def __init__(self, window: Any, hint: QLabel, view_menu: QMenu, stand_in: QAction) -> None:
        """``stand_in``: View ▸ Runs until now (:mod:`.seat`); the dock's toggle takes its
        place in the menu, its text and its key."""
        self.window = window
        self.recordings: set[str] = set()  # traces being recorded by a proxy started here
        self._following: set[Any] = set()  # live tabs whose runs the library leaves to them
        self._dock_away = False  # the dock was hidden for the start page (shown again after)
        address = chosen_address(window.settings.library)
        self.controller = LibraryController(window, folders=default_folders(), db=address)
        self.start_page = QWidget()
        lay = QVBoxLayout(self.start_page)
        lay.addWidget(hint)
        self.page = RunsPage(self.controller)
        lay.addWidget(self.page, 1)
        self.dock = QDockWidget("Runs", window)
        self.dock.setObjectName("runs-dock")
        self.dock_page = RunsPage(self.controller)
        self.dock.setWidget(self.dock_page)
        self.dock.hide()
        action = self.dock.toggleViewAction()
        action.setText(stand_in.text())
        action.setShortcut(stand_in.shortcut())
        view_menu.insertAction(stand_in, action)
        window.addAction(action)
        for page in (self.page, self.dock_page):
            page.open_requested.connect(self.open)
        self._pending = (-1, "", "")  # (seq, query, sample) of the run being fetched
        self._arriving: Any = None  # the tab showing the head of the run being fetched
        self.controller.fetched.connect(self._fetched)
        self.controller.fetch_failed.connect(self._fetch_failed)
        self.controller.fetch_head.connect(self._head_arrived)
        self.controller.fetch_progress.connect(self._arriving_progress)
        self._start_pending = True

    def start(self) -> None:
        """Start the library: its folder watch, indexer thread and first list. The window's
        :class:`~.seat.LibrarySeat` calls it once the run opened at start has shown its
        plot (at once when none is opening), whenever this was built."""
        if self._start_pending:
            self._start_pending = False
            self.controller.start()

    def start_page_shown(self, shown: bool) -> None:
        """The start page lists the runs itself: the Runs dock beside it was a second copy
        of the same list and search box, so it steps aside while the start page shows and
        comes back with the first tab."""
        if shown and self.dock.isVisible():
            self.dock.hide()
            self._dock_away = True
        elif not shown and self._dock_away:
            self.dock.show()
            self._dock_away = False

    def settings_dialog(self) -> LibraryDialog:
        """Open Settings ▸ Library…; on OK the choice is saved at once and the Runs page
        lists the chosen library."""
        in_use = self.controller.store if self.controller.team_address() else ""
        dialog = LibraryDialog(self.window.settings.library, self.window, in_use)
        dialog.accepted.connect(lambda: self.use_library(dialog.address))
        dialog.open()
        return dialog

    def use_library(self, address: str) -> None:
        """Keep ``address`` ("" : this computer's) as the library and switch to it."""
        settings = self.window.settings
        if address == settings.library:
            return
        settings.library = address
        save_settings(settings)
        self.controller.switch(chosen_address(address))

    def install_dock(self) -> None:
        self.window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.dock)
        self.dock.hide()

    def open(self, path: str, seq: int, query: str, sample: str = "") -> None:
        """Show ``path`` in a tab (its open one, else a new one); at step ``seq`` (-1: where
        it opens) of its sample ``sample`` (``ID:EPOCH`` of an Inspect log, chosen on the
        tab's sample bar as a user would; "": the one it opens at) with the search's step
        terms as the tab's filter. A run whose file is on another machine is fetched from
        the library's run store first (off the GUI thread), then opened from the cache."""
        if self.controller.needs_fetch(path):
            self._pending = (seq, query, sample)  # a newer fetch supersedes an older one
            self._drop_arriving()  # (the older one's head: its run will not come now)
            self.window.statusBar().showMessage(f"Fetching {Path(path).name} from the run store…")
            self.controller.fetch(path)
            return
        self._show(path, seq, query, sample)

    def _head_arrived(self, _path: str, target: object, head: object) -> None:
        """A big run's first screen, while the rest of it arrives: shown in the tab the
        whole run will load into, as a local big run's head is (not complete: no checksum
        verdict, the progress bar on; see :mod:`loom_core.library.arriving`)."""
        if self._arriving is None:
            self._arriving = self.window.open_path(str(target), defer=True)
            self._arriving.show_other_run(head)

    def _arriving_progress(self, done: int, total: int) -> None:
        if self._arriving is not None:
            self._arriving.progressed.emit(done, total)

    def _drop_arriving(self) -> None:
        """Close the tab of a head whose run will not arrive (failed or superseded)."""
        view, self._arriving = self._arriving, None
        index = self.window.tabs.indexOf(view) if view is not None else -1
        if index >= 0:
            self.window.close_tab(index)

    def _fetched(self, _path: str, local: object) -> None:
        seq, query, sample = self._pending
        self.window.statusBar().clearMessage()
        view, self._arriving = self._arriving, None
        if view is None:
            self._show(str(local), seq, query, sample)
        elif self.window.tabs.indexOf(view) >= 0:  # (a tab the user closed stays closed)
            view.start_loading()  # the whole run, from its cache file
            self._arrive_at(view, seq, query, sample)

    def _fetch_failed(self, path: str, why: str) -> None:
        self.window.statusBar().clearMessage()
        self._drop_arriving()
        self.window.report_error("Open run", f"Cannot open {path}\n\n{why}")

    def _show(self, path: str, seq: int, query: str, sample: str) -> None:
        view = self._tab_of(path, sample)
        if view is not None:
            self.window.tabs.setCurrentWidget(view)
        else:
            view = self.window.open_path(path)
        self._arrive_at(view, seq, query, sample)

    def _arrive_at(self, view: Any, seq: int, query: str, sample: str) -> None:
        """Once ``view`` is loaded: its sample ``sample``, step ``seq``, filter ``query``."""
        if seq < 0 and not query and not sample:
            return

        def arrive() -> None:
            tl = view.session.timeline
            row = step_of_seq(tl, seq) if tl is not None and seq >= 0 else None
            terms = step_terms(query)
            if terms or view.filter_box.text():
                view.filter_box.setText(terms)
            if note := word_note(terms):  # the filter's steps may differ: say why
                self.window.show_status(note, NOTE_MS)
            if row is not None:
                view.session.set_step(row)

        def in_sample() -> None:
            bar = view.sample_bar
            if sample and bar is not None and bar.switch_to(sample):
                bar.shown.connect(arrive, Qt.ConnectionType.SingleShotConnection)
            else:
                arrive()

        if view.complete:
            in_sample()
        else:
            view.loaded.connect(in_sample)

    def _tab_of(self, path: str, sample: str = "") -> Any:
        """The tab already showing ``path``, or None. Of a file of several samples, only a
        tab showing the hit's ``sample``: one showing another sample is the user's view of
        that one, and a run row (no sample) opens a tab of its own."""
        for view in self.window.documents():
            bar = view.sample_bar
            if _same_file(view.path, path) and (
                bar is None or (sample and bar.current() == sample)
            ):
                return view
        return None

    def loaded(self, path: str) -> None:
        """The window opened ``path``: the library lists it (or brings it up to date). The
        journal of a recording the app is making is not a run of its own (its trace is),
        nor is a copy of another machine's run fetched into the cache (the library lists
        that run already, on its own machine). The bundled sample (every first start opens
        it) is nobody's run: a team's library would list it once per member and host, so
        only the computer's own library lists it."""
        if is_cached(path):
            return
        if self.controller.team_address() is not None and _same_file(path, str(sample_trace())):
            return
        if path.endswith(JOURNAL) and path[: -len(JOURNAL)] + TRACE in self.recordings:
            return
        self.controller.note(path, "opened")

    def note(self, path: str, event: str, error: str = "") -> None:
        """The app ``recording``/``recorded``/``forked``/``healed`` ``path`` (``error``: an
        error it saw end the run)."""
        if event == "recording":
            self.recordings.add(path)
        self.controller.note(path, event, error)

    def follow(self, tab: Any, path: str, on: bool) -> None:
        """Whether the live ``tab`` follows ``path`` now: while it does, a line appended to
        the run wakes only the tab (the library's watch of it woke two threads more per
        line, issue 24); once its run settles or the tab closes, the library reads it."""
        if on != (tab in self._following):
            (self._following.add if on else self._following.discard)(tab)
            self.controller.follow(path, on)

    def shutdown(self) -> None:
        self._start_pending = False  # (a tab closed after this starts nothing)
        self.controller.shutdown()
