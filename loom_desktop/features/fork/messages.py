"""The fork dialog's message list: the context at the fork step, editable message by message.

Why a table plus one editor (and not editable cells): messages are long; the list
shows role, source and a one-line preview with what changed, the editor below
holds the selected message's full text. All state lives in the
:class:`~.draft.ForkDraft`; this widget only draws it and forwards changes.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from loom_desktop.features.fork.draft import ForkDraft

COLUMNS = ("#", "Role", "Source", "Content", "Change")
PREVIEW = 200  # characters of content in the list
_COLORS = {"new": "#2e7d32", "edited": "#1565c0", "deleted": "#9e9e9e", "redacted": "#ef6c00"}


def preview(text: str, calls: list[dict[str, Any]] | None = None) -> str:
    """One line: the text, then the tool calls an assistant message made."""
    shown = " ".join(text[: PREVIEW * 2].split())
    for call in calls or []:
        args = json.dumps(call.get("input"), ensure_ascii=False)[:PREVIEW]
        shown += f" → {call.get('name')}({args})"
    return shown.strip()[:PREVIEW]


class MessageEditor(QWidget):
    """List + editor + buttons over a draft; ``changed`` after every edit."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.draft: ForkDraft | None = None
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setWordWrap(False)
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        for col, width in ((0, 36), (1, 72), (2, 110), (4, 70)):
            self.table.setColumnWidth(col, width)
        self.editor = QPlainTextEdit(placeholderText="Select a message to edit its content")
        # tool output is columns and code: a proportional font scrambles it
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.caption = QLabel()
        self.insert_btn = QPushButton("Insert user message")
        self.insert_btn.setToolTip("A new user message after the selected one")
        self.delete_btn = QPushButton("Delete")
        self.redact_btn = QPushButton("Redact result")
        self.redact_btn.setCheckable(True)
        self.redact_btn.setToolTip(
            "Replace this tool result with a redaction note "
            "(the call keeps its result, so the API accepts it)"
        )
        self.revert_btn = QPushButton("Revert")
        self._layout()
        self._loading = False
        self.table.currentCellChanged.connect(lambda row, *_: self._select(row))
        self.editor.textChanged.connect(self._text_changed)
        self.insert_btn.clicked.connect(self.insert_after)
        self.delete_btn.clicked.connect(self.toggle_delete)
        self.redact_btn.toggled.connect(self._redact_toggled)
        self.revert_btn.clicked.connect(self.revert)

    def _layout(self) -> None:
        buttons = QHBoxLayout()
        for b in (self.insert_btn, self.delete_btn, self.redact_btn, self.revert_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lower = QWidget()
        lay = QVBoxLayout(lower)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.caption)
        lay.addWidget(self.editor)
        lay.addLayout(buttons)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(lower)
        split.setSizes([300, 220])
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(split)

    # -- drawing -------------------------------------------------------------------------
    def set_draft(self, draft: ForkDraft) -> None:
        self.draft = draft
        self.refresh(max(0, len(draft.rows) - 1))

    def refresh(self, select: int | None = None) -> None:
        """Redraw every row (lists are short) and select ``select``."""
        assert self.draft is not None
        self.table.setRowCount(len(self.draft.rows))
        for k in range(len(self.draft.rows)):
            self._fill(k)
        if select is not None and self.draft.rows:
            self.table.setCurrentCell(min(select, len(self.draft.rows) - 1), 3)
        self._select(self.table.currentRow())

    def _fill(self, k: int) -> None:
        assert self.draft is not None
        row = self.draft.rows[k]
        status = row.status()
        cells = (
            str(k),
            row.role,
            row.source,
            preview(row.shown_text(), row.item.get("tool_calls")),
            status,
        )
        font = QFont()
        font.setStrikeOut(status == "deleted")
        font.setItalic(status == "redacted")
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setFont(font)
            if status:
                item.setForeground(QColor(_COLORS[status]))
            if col == 3:
                item.setToolTip(row.shown_text()[:2000])
            self.table.setItem(k, col, item)

    def current(self) -> int:
        return self.table.currentRow()

    def _select(self, row: int) -> None:
        draft = self.draft
        valid = draft is not None and 0 <= row < len(draft.rows)
        self._loading = True
        try:
            text = draft.rows[row].text if valid else ""  # type: ignore[union-attr]
            self.editor.setPlainText(text)
        finally:
            self._loading = False
        self._update_buttons()

    def _update_buttons(self) -> None:
        draft, row = self.draft, self.current()
        valid = draft is not None and 0 <= row < len(draft.rows)
        r = draft.rows[row] if valid else None  # type: ignore[union-attr]
        self.editor.setReadOnly(not valid or bool(r and r.deleted))
        self.insert_btn.setEnabled(draft is not None)
        self.delete_btn.setEnabled(valid)
        self.delete_btn.setText("Restore" if r is not None and r.deleted else "Delete")
        self.redact_btn.setEnabled(valid and draft.can_redact(row))  # type: ignore[union-attr]
        self.redact_btn.blockSignals(True)
        self.redact_btn.setChecked(bool(r and r.redacted))
        self.redact_btn.blockSignals(False)
        self.revert_btn.setEnabled(bool(r and r.original and r.status()))
        if r is None:
            self.caption.setText("")
        else:
            where = (
                f"recorded at step {r.origin}"
                if r.origin is not None
                else ("inserted by you" if not r.original else "")
            )
            self.caption.setText(
                f"Message {row} · {r.role} · {r.source} {where}".rstrip()
                + (" · deleted" if r.deleted else "")
            )

    # -- editing ---------------------------------------------------------------------------
    def _changed_row(self, row: int) -> None:
        self._fill(row)
        self._update_buttons()
        self.changed.emit()

    def _text_changed(self) -> None:
        row = self.current()
        if self._loading or self.draft is None or not 0 <= row < len(self.draft.rows):
            return
        self.draft.set_text(row, self.editor.toPlainText())
        self._changed_row(row)

    def insert_after(self) -> None:
        if self.draft is None:
            return
        at = self.draft.insert_user(self.current() + 1)
        self.refresh(at)
        self.editor.setFocus()
        self.changed.emit()

    def toggle_delete(self) -> None:
        row = self.current()
        if self.draft is None or row < 0:
            return
        r = self.draft.rows[row]
        if r.deleted:
            self.draft.restore(row)
            self._changed_row(row)
            return
        self.draft.delete(row)
        if r.original:
            self._changed_row(row)
        else:
            self.refresh(row)
            self.changed.emit()

    def _redact_toggled(self, on: bool) -> None:
        row = self.current()
        if self.draft is not None and row >= 0 and self.draft.can_redact(row):
            self.draft.set_redacted(row, on)
            self._changed_row(row)

    def revert(self) -> None:
        row = self.current()
        if self.draft is not None and row >= 0:
            self.draft.revert(row)
            self._select(row)
            self._changed_row(row)
