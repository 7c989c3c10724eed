"""The Qt model over every attached proxy's held calls: one row per pending approval.

One model for all proxies, because a user with two proxies has one queue to work
through (two panels used to disagree: one said "no held calls" while the status bar
said one was held). Each row keeps the proxy it came from (``source``, any object,
a :class:`~loom_desktop.features.proxy.connection.ProxyConnection` in the app) and
says which one it is. Rows come from each proxy's event stream or polling; an update
replaces that proxy's rows by approval id (inserts and removes, no reset), so a
selected card stays selected while others come and go.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from loom_core.proxy.control_client import PendingCall

CallRole = Qt.ItemDataRole.UserRole + 1
_Index = QModelIndex | QPersistentModelIndex


@dataclass
class Held:
    """One held call and the proxy it came from (``name``: how the row names that proxy)."""

    source: Any
    call: PendingCall
    name: str = ""


class ApprovalsModel(QAbstractListModel):
    """Held calls in the order they arrived (each proxy lists its own oldest first)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Held] = []

    @property
    def calls(self) -> list[PendingCall]:
        return [row.call for row in self.rows]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        held = self.rows[index.row()]
        call = held.call
        if role == Qt.ItemDataRole.DisplayRole:  # the proxy on a line of its own: a long
            args = json.dumps(call.input, ensure_ascii=False)  # call must not push it out of view
            where = f"\n    from {held.name}" if held.name else ""
            return f"{call.tool}({args[:80]}{'…' if len(args) > 80 else ''})  ·  {call.rule}{where}"
        if role == CallRole:
            return call
        if role == Qt.ItemDataRole.ToolTipRole:
            where = f"held by {held.name}\n" if held.name else ""
            return where + json.dumps(call.input, indent=2, ensure_ascii=False)
        return None

    def update(
        self, calls: list[PendingCall], source: Any = None, name: str = ""
    ) -> list[PendingCall]:
        """Bring ``source``'s rows in line with ``calls``; returns the calls that are new."""
        wanted = {c.id for c in calls}
        for row in range(len(self.rows) - 1, -1, -1):
            held = self.rows[row]
            if held.source is source and held.call.id not in wanted:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.rows[row]
                self.endRemoveRows()
        known = {h.call.id: i for i, h in enumerate(self.rows) if h.source is source}
        new = []
        for call in calls:
            if call.id in known:
                row = known[call.id]
                self.rows[row] = Held(source, call, name)  # age and approvals move on
                index = self.index(row)
                self.dataChanged.emit(index, index)
            else:
                row = len(self.rows)
                self.beginInsertRows(QModelIndex(), row, row)
                self.rows.append(Held(source, call, name))
                self.endInsertRows()
                new.append(call)
        return new

    def forget(self, source: Any) -> None:
        """Drop every row of ``source`` (its proxy was stopped or detached)."""
        self.update([], source)

    def held_at(self, row: int) -> Held | None:
        return self.rows[row] if 0 <= row < len(self.rows) else None

    def call_at(self, row: int) -> PendingCall | None:
        held = self.held_at(row)
        return held.call if held is not None else None

    def row_of(self, source: Any, call_id: str) -> int:
        """The row of ``source``'s call ``call_id`` (-1 when it is not held any more)."""
        return next(
            (i for i, h in enumerate(self.rows) if h.source is source and h.call.id == call_id),
            -1,
        )
