"""Qt models over the library's two collections: runs (the Runs page) and hits (a search).

One model per core collection (DESIGN.md): :class:`RunsModel` shows
:class:`~loom_core.library.rows.RunRow` rows, :class:`HitsModel`
:class:`~loom_core.library.rows.Hit` rows; both are filled by the controller from its
worker and never query the database themselves.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QColor

from loom_core.library.backend import this_host
from loom_core.library.rows import Hit, RunRow
from loom_core.live.outcome import FAILED, HUMAN, RUNNING, STOPPED

Index = QModelIndex | QPersistentModelIndex
_NO_INDEX = QModelIndex()
# (header, library sort key or "" when the column cannot sort)
COLUMNS = (
    ("When", "time"),
    ("Run", "path"),
    ("Task", ""),
    ("Source", "format"),
    ("Model", "model"),
    ("Steps", "steps"),
    ("Tokens", "tokens"),
    ("Cost", "cost"),
    ("Outcome", "outcome"),
    ("Branch of", ""),
    ("By", ""),  # who indexed or published it, on which machine (a team library's runs)
)
_GREY = QColor("#90a4ae")
_OUTCOME_COLORS = {
    FAILED: QColor("#c62828"),
    STOPPED: QColor("#bf360c"),
    RUNNING: QColor("#1565c0"),
    HUMAN: QColor("#ef6c00"),
}


def when_text(stamp: float | None, now: float | None = None) -> str:
    """``14:02`` today, ``Nov 28 14:02`` this year, else ``2025-11-28``."""
    if stamp is None:
        return ""
    local, today = time.localtime(stamp), time.localtime(now)
    if local[:3] == today[:3]:
        return time.strftime("%H:%M", local)
    if local.tm_year == today.tm_year:
        return time.strftime("%b %d %H:%M", local)
    return time.strftime("%Y-%m-%d", local)


def run_names(paths: list[str]) -> list[str]:
    """Each path as a list of hits names its run: the file's name, with its folder's when
    another run in the list has the same name (five demo runs are all ``demo.loom.json``)."""
    folders: dict[str, set[str]] = {}
    for path in paths:
        folders.setdefault(Path(path).name, set()).add(str(Path(path).parent))
    return [
        f"{Path(p).parent.name}/{Path(p).name}" if len(folders[Path(p).name]) > 1 else Path(p).name
        for p in paths
    ]


def run_cells(run: RunRow, name: str = "") -> tuple[str, ...]:
    """The row's text per column (see :data:`COLUMNS`); ``name``: the run as the list names
    it (:func:`run_names`; default its file's name)."""
    cost = run.cost_text()  # as the status bar says it: "$0 offline", "?" unpriced
    tokens = run.tokens_in + run.tokens_out
    outcome = run.outcome if run.state == "ok" else f"{run.state}: {run.cause}"
    branch = ""
    if run.parent:
        branch = (
            f"{Path(run.parent).name} @ step {run.fork_seq}"
            if run.fork_seq is not None
            else Path(run.parent).name
        )
        branch += f" (healed: {run.healed_by})" if run.healed_by else ""
    return (
        when_text(run.time),
        name or Path(run.path).name,
        " ".join(run.title.split()),
        run.format,
        ", ".join(run.models),
        f"{run.steps:,}" if run.state == "ok" else "",
        f"{tokens:,}" if tokens else "",
        cost,
        outcome,
        branch,
        f"{run.author}@{run.host}" if run.host else run.author,
    )


class RunsModel(QAbstractTableModel):
    """The Runs page's table."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.runs: list[RunRow] = []
        self._cells: list[tuple[str, ...]] = []

    def set_runs(self, runs: list[RunRow]) -> None:
        self.beginResetModel()
        names = run_names([r.path for r in runs])
        self.runs, self._cells = runs, [run_cells(r, n) for r, n in zip(runs, names, strict=True)]
        self.endResetModel()

    def rowCount(self, parent: Index = _NO_INDEX) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self.runs)

    def columnCount(self, parent: Index = _NO_INDEX) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section][0]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        run, col = self.runs[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[index.row()][col]
        if role == Qt.ItemDataRole.ToolTipRole:
            if run.state != "ok":
                return f"{run.path}\n{run.state}: {run.cause}"
            where = f"{run.path}\non {run.host}" if run.host else run.path
            published = f"\npublished: {run.url}" if run.url else ""
            return where + published + (f"\n{run.outcome}: {run.why}" if run.why else "")
        if role == Qt.ItemDataRole.ForegroundRole:
            if run.state != "ok":
                return _GREY
            return _OUTCOME_COLORS.get(run.outcome) if COLUMNS[col][0] == "Outcome" else None
        if role == Qt.ItemDataRole.TextAlignmentRole and COLUMNS[col][0] in (
            "Steps",
            "Tokens",
            "Cost",
        ):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class HitsModel(QAbstractListModel):
    """A search's hits: ``run · step N · tool  …snippet with «match»…``."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.hits: list[Hit] = []
        self._runs: list[str] = []  # each hit's run as the list names it (run_names)

    def set_hits(self, hits: list[Hit]) -> None:
        self.beginResetModel()
        self.hits, self._runs = hits, run_names([h.path for h in hits])
        self.endResetModel()

    def rowCount(self, parent: Index = _NO_INDEX) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self.hits)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        hit = self.hits[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            where = "start" if hit.seq is None else f"step {hit.seq}"
            where = " · ".join(filter(None, [hit.sample_label(), where]))
            tool = f" · {hit.tool}" if hit.tool else ""
            snippet = " ".join(hit.marked("«", "»").split())  # one line per hit
            here = hit.host in ("", this_host())
            name = self._runs[index.row()] + ("" if here else f" on {hit.host}")
            run = " · ".join(filter(None, [when_text(hit.time), name]))
            return f"{run} · {where}{tool}    {snippet}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{hit.path}\non {hit.host}" if hit.host else hit.path
        return None
