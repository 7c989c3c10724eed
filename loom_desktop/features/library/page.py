"""The Runs page: every run in the library, a search across them, open / reveal / forget.

Shown as the window's start page when no run is open, and in the View ▸ Runs dock; both
are views of one :class:`~loom_desktop.features.library.controller.LibraryController`.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from loom_desktop.features.library.controller import PAGE, LibraryController
from loom_desktop.features.library.models import COLUMNS
from loom_desktop.infra.reveal import Revealer

SEARCH_HELP = (
    "Search every run: words in messages, tool arguments and results; tool:bash, "
    '"exact phrase", is:error, is:blocked, agent:NAME, model:NAME, after:2026-11-01, before:…'
)


RUN_CHARS = 26  # the Run column's widest, in average characters
NAME_SORTS = ("path", "format", "model", "outcome")  # sorted A to Z on a first click


def arrow_order(descending: bool) -> Qt.SortOrder:
    """The header's sort indicator for a list sorted ``descending``, so that its arrow says
    what the list does: ▼ for newest (biggest) first, as file managers draw it. Why not
    the list's own order: QHeaderView draws AscendingOrder as a down arrow and
    DescendingOrder as an up one (it maps Ascending to QStyleOptionHeader.SortDown), and
    the newest-first list said "When ▲", which reads as oldest first."""
    return Qt.SortOrder.AscendingOrder if descending else Qt.SortOrder.DescendingOrder


class RunsPage(QWidget):
    """See the module docstring. ``open_requested(path, seq or -1, query, sample)``
    (``sample``: ``ID:EPOCH`` of an Inspect log's sample the hit is in, else "")."""

    open_requested = Signal(str, int, str, str)

    def __init__(self, controller: LibraryController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.revealer = Revealer(self)  # Reveal in Folder, or why it cannot
        self.search = QLineEdit(
            placeholderText='Search all runs…  (tool:bash "rm -rf" is:error model:… after:…)'
        )
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(SEARCH_HELP)
        self.search.textChanged.connect(controller.set_query)
        self.status = QLabel()
        self.status.setStyleSheet("color: gray;")
        self.table = QTableView()
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setModel(controller.runs)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)  # the task
        header.setSortIndicatorShown(True)
        header.setSortIndicator(0, arrow_order(descending=True))
        header.sectionClicked.connect(self._sort)
        self.table.doubleClicked.connect(self._open_run)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._menu)
        self.hits = QListView()
        self.hits.setModel(controller.hits)
        self.hits.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.hits.activated.connect(self._open_hit)  # a double-click or Enter (not both)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(self.hits)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.search)
        lay.addWidget(self.split, 1)
        lay.addWidget(self.status)
        controller.answered.connect(self._answered)
        controller.progressed.connect(self._progress)
        controller.failed.connect(self._failed)
        self._indexing = ""
        self._failure = ""  # why the current query has no answer, until one comes
        self._unfitted = True
        self._answered()

    # -- showing ---------------------------------------------------------------------
    def _answered(self) -> None:
        c = self.controller
        self._failure = ""
        if self.search.text() != c.query:
            self.search.blockSignals(True)
            self.search.setText(c.query)
            self.search.blockSignals(False)
        self.hits.setVisible(bool(c.hits.hits))
        self._show_sort()
        self._show_status()
        self._fit_columns()

    def _failed(self, cause: str) -> None:
        """The query has a problem (named): said until a query is answered. Why kept: the
        indexer's progress redraws the status line, and used to wipe the warning at once."""
        self._failure = cause
        self._show_status()

    def _show_status(self) -> None:
        c = self.controller
        if self._failure:
            what = f"⚠ {self._failure}"
        else:
            shown = len(c.runs.runs)
            more = f" (first {PAGE})" if shown >= PAGE else ""
            runs = "run" if c.total == 1 else "runs"
            what = (
                f"{shown:,} of {c.total:,} {runs}{more}"
                if c.query.strip()
                else f"{c.total:,} {runs}{more}"
            )
            found = len(c.hits.hits)
            what += f" · {found:,} matching step{'' if found == 1 else 's'}" if found else ""
        self.status.setText(what + (f" · {self._indexing}" if self._indexing else ""))

    def _fit_columns(self) -> None:
        """Columns sized to what they hold; skipped while the page is hidden (it costs a
        few ms per column over a page of runs, and the library changes with every run
        opened or recorded), done again when it is shown."""
        if not self.isVisible():
            self._unfitted = True
            return
        self._unfitted = False
        for col in (0, 1, 3, 4, 5, 6, 7, 8):
            self.table.resizeColumnToContents(col)
        # a run's file name can be long (a Claude Code session's id, an Inspect log's time
        # and task): capped, so the numbers after it stay in view (its tooltip is the path)
        widest = self.table.fontMetrics().horizontalAdvance("x" * RUN_CHARS)
        if self.table.columnWidth(1) > widest:
            self.table.setColumnWidth(1, widest)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._unfitted:
            self._fit_columns()

    def _progress(self, text: str) -> None:
        self._indexing = text
        self._show_status()

    def _sort(self, column: int) -> None:
        """A header click: the same column again flips the order; another one starts where
        it helps most (times and numbers biggest first, names A to Z)."""
        c = self.controller
        key = COLUMNS[column][1]
        if key:
            descending = not c.descending if key == c.sort else key not in NAME_SORTS
            c.sort_by(column, descending)
        self._show_sort()  # Qt moved the arrow itself on the click: put it where it belongs

    def _show_sort(self) -> None:
        column = next(i for i, (_name, key) in enumerate(COLUMNS) if key == self.controller.sort)
        header = self.table.horizontalHeader()
        header.setSortIndicator(column, arrow_order(self.controller.descending))

    # -- acting ----------------------------------------------------------------------
    def _path_at(self, index: QModelIndex) -> str | None:
        runs = self.controller.runs.runs
        return runs[index.row()].path if index.isValid() and index.row() < len(runs) else None

    def _open_run(self, index: QModelIndex) -> None:
        path = self._path_at(index)
        if path is not None:
            self.open_requested.emit(path, -1, "", "")

    def _open_hit(self, index: QModelIndex) -> None:
        hits = self.controller.hits.hits
        if index.isValid() and index.row() < len(hits):
            hit = hits[index.row()]
            seq = -1 if hit.seq is None else hit.seq
            self.open_requested.emit(hit.path, seq, self.controller.query, hit.sample)

    def _menu(self, pos: QPoint) -> None:
        path = self._path_at(self.table.indexAt(pos))
        if path is None:
            return
        menu = QMenu(self)
        menu.addAction("Open").triggered.connect(lambda: self.open_requested.emit(path, -1, "", ""))
        menu.addAction("Reveal in Folder").triggered.connect(lambda: self.revealer.reveal(path))
        team = self.controller.team_address() is not None  # one list for everyone
        forget = menu.addAction(f"Forget{' for the team' if team else ''} (keep the file)")
        forget.triggered.connect(lambda: self.controller.forget(path))
        elsewhere = self.controller.elsewhere(path)
        if elsewhere:  # a row names its machine's file: only that machine forgets it
            forget.setEnabled(False)
            forget.setToolTip(elsewhere)
            menu.setToolTipsVisible(True)
        menu.popup(self.table.viewport().mapToGlobal(pos))
