"""The Qt model over a proxy's held calls: one row per pending approval.

Rows come from polling the control plane; an update inserts and removes rows by
approval id (no reset), so a selected card stays selected while others come and go.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from loom_core.proxy.control_client import PendingCall

CallRole = Qt.ItemDataRole.UserRole + 1
_Index = QModelIndex | QPersistentModelIndex


class ApprovalsModel(QAbstractListModel):
    """Pending calls in the order the proxy lists them (oldest first)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.calls: list[PendingCall] = []

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.calls)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.calls):
            return None
        call = self.calls[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            args = json.dumps(call.input, ensure_ascii=False)
            return f"{call.tool}({args[:80]}{'…' if len(args) > 80 else ''})  ·  {call.rule}"
        if role == CallRole:
            return call
        if role == Qt.ItemDataRole.ToolTipRole:
            return json.dumps(call.input, indent=2, ensure_ascii=False)
        return None

    def update(self, calls: list[PendingCall]) -> list[PendingCall]:
        """Bring the rows in line with ``calls``; returns the calls that are new."""
        wanted = {c.id for c in calls}
        for row in range(len(self.calls) - 1, -1, -1):
            if self.calls[row].id not in wanted:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.calls[row]
                self.endRemoveRows()
        known = {c.id: i for i, c in enumerate(self.calls)}
        new = []
        for call in calls:
            if call.id in known:
                self.calls[known[call.id]] = call  # age and approvals move on
                index = self.index(known[call.id])
                self.dataChanged.emit(index, index)
            else:
                row = len(self.calls)
                self.beginInsertRows(QModelIndex(), row, row)
                self.calls.append(call)
                self.endInsertRows()
                new.append(call)
        return new

    def call_at(self, row: int) -> PendingCall | None:
        return self.calls[row] if 0 <= row < len(self.calls) else None
