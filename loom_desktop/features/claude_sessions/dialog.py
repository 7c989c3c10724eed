"""File ▸ Open Claude Code Session…: pick one of this machine's Claude Code sessions.

The list (:func:`loom_core.formats.claude_sessions.list_sessions`) is made by a worker:
a machine can hold thousands of sessions and each file's head is read for its first
prompt. Newest first, since the session a user wants is usually the one they just ran
(or the one still running: it opens as a live tab, like any file being written).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from loom_core.formats.claude_sessions import SessionInfo, claude_config_dir, list_sessions
from loom_desktop.infra.workers import Task

_Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("Modified", "Project", "First prompt", "Size")


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n = n / 1024  # type: ignore[assignment]
    return str(n)


class SessionsModel(QAbstractTableModel):
    """The sessions found, one row each (newest first, as listed)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.sessions: list[SessionInfo] = []

    def set_sessions(self, sessions: list[SessionInfo]) -> None:
        self.beginResetModel()
        self.sessions = list(sessions)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.sessions)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section] if 0 <= section < len(COLUMNS) else None
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.sessions):
            return None
        info = self.sessions[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                time.strftime("%Y-%m-%d %H:%M", time.localtime(info.modified)),
                info.project,
                info.first_prompt or "(no prompt yet)",
                _size(info.size),
            )[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{info.path}\n\n{info.first_prompt}"
        return None


class ClaudeSessionsDialog(QDialog):
    """Lists the sessions in a worker; ``chosen(path)`` when the user opens one."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None, root: Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open Claude Code Session")
        self.resize(900, 480)
        self.root = root or claude_config_dir()
        self.note = QLabel(f"Looking for sessions in {self.root / 'projects'}…", wordWrap=True)
        self.model = SessionsModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)  # a wrapped project folder was cut at the row's height
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda _i: self.accept())
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self._open_button().setEnabled(False)
        lay = QVBoxLayout(self)
        for widget in (self.note, self.table, self.buttons):
            lay.addWidget(widget)
        self.task = Task(self)
        self.task.finished.connect(self._listed)
        self.task.failed.connect(lambda exc: self.note.setText(f"Cannot list sessions: {exc}"))
        root_dir = self.root
        self.task.start(lambda ctx: list_sessions(root_dir, ctx.cancelled))

    def _open_button(self) -> Any:
        return self.buttons.button(QDialogButtonBox.StandardButton.Open)

    def _listed(self, sessions: object) -> None:
        found = sessions if isinstance(sessions, list) else []
        self.model.set_sessions(found)
        where = self.root / "projects"
        self.note.setText(
            f"{len(found)} session(s) in {where}, newest first."
            if found
            else f"No Claude Code sessions in {where} (set CLAUDE_CONFIG_DIR if they are elsewhere)."
        )
        self._open_button().setEnabled(bool(found))
        if found:
            self.table.selectRow(0)
            self.table.resizeColumnToContents(0)
            self.table.resizeColumnToContents(1)

    def selected_path(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        return self.model.sessions[rows[0].row()].path

    def accept(self) -> None:
        path = self.selected_path()
        if path is None:
            return
        super().accept()
        self.chosen.emit(path)

    def done(self, result: int) -> None:
        self.task.cancel()  # closing while listing: the worker stops at the next file
        super().done(result)
