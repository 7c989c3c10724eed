"""The bars that link a branch and its parent, shown at the top of their tabs.

A branch tab gets a :class:`BranchBar`: where it came from (a link to the parent at
the fork step), what was edited, how it stands (running with live calls and
tokens, done, paused...), Compare with parent, Cancel while it runs -- and, when
it paused on a tool call the parent never made, that call with an editor for its
result, Continue and Stop here. A parent tab gets a :class:`BranchesBar` listing
its branches. The bars only emit what the user asked for; the window's fork
actions do it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from loom_desktop.features.fork.links import BranchInfo, status_text
from loom_desktop.features.fork.sentinel import NOTHING

BAR_STYLE = "BranchBar, BranchesBar { background: #f3e5f5; border-bottom: 1px solid #ce93d8; }"
_STATUS_COLORS = {
    "done": "#2e7d32",
    "running": "#1565c0",
    "needs_tool_result": "#ef6c00",
    "error": "#c62828",
    "failed": "#c62828",
    "cancelled": "#6d4c41",
}
TEXT, JSON = "Plain text", "JSON"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class BranchBar(QFrame):
    """Header of a branch tab; see the module docstring."""

    parent_requested = Signal()
    compare_requested = Signal()
    cancel_requested = Signal()
    continue_requested = Signal(object)  # the tool result (NOTHING: continue without one)
    stop_requested = Signal()

    def __init__(
        self,
        parent_name: str,
        seq: int,
        edit: str,
        mode: str = "model",
        healed: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setStyleSheet(BAR_STYLE)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)  # no growth
        self.parent_name, self.seq, self.edit, self.mode = parent_name, seq, edit, mode
        self.what = f"Heal winner ({healed})" if healed else "Fork"
        self.status = "running"
        self.title = QLabel(wordWrap=True)  # wraps rather than widening the window
        self.title.linkActivated.connect(lambda _l: self.parent_requested.emit())
        self.detail = QLabel()
        self.where = QLabel()  # the folder the branch is saved in (the path: its tooltip)
        self.where.setStyleSheet("color: #6a1b9a;")
        self.where.setMinimumWidth(1)  # clipped, not the window widened, when room is short
        self.detail.setMinimumWidth(1)
        self.parent_btn = QPushButton(f"Parent at step {seq}")
        self.parent_btn.clicked.connect(self.parent_requested)
        self.compare_btn = QPushButton("Compare with parent")
        self.compare_btn.clicked.connect(self.compare_requested)
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.clicked.connect(self.cancel_requested)
        self.retry_btn = QPushButton("Continue")
        self.retry_btn.setToolTip("Run the branch on from where it stopped")
        self.retry_btn.clicked.connect(lambda: self.continue_requested.emit(NOTHING))
        self.pending = PendingCall()
        self.pending.continue_requested.connect(self.continue_requested)
        self.pending.stop_requested.connect(self.stop_requested)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        for w in (
            self.detail,
            self.where,
            self.parent_btn,
            self.compare_btn,
            self.retry_btn,
            self.cancel_btn,
        ):
            top.addWidget(w)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.addLayout(top)
        lay.addWidget(self.pending)
        self.set_status("running")

    def set_status(
        self, status: str, pending: dict[str, Any] | None = None, error: str | None = None
    ) -> None:
        """Show ``status`` (a branch status, ``running`` or ``failed``)."""
        self.status = status
        words = status_text(status)
        if error:
            words += f": {error}"
        color = _STATUS_COLORS.get(status, "#424242")
        self.title.setText(
            f"↳ {_esc(self.what)} of <a href='parent'>{_esc(self.parent_name)}</a> at step {self.seq}"
            f" — {_esc(self.edit)} — <b style='color:{color}'>{_esc(words)}</b>"
        )
        running = status == "running"
        self.cancel_btn.setVisible(running)
        self.compare_btn.setEnabled(not running)
        self.retry_btn.setVisible(self.mode == "model" and status in ("cancelled", "error"))
        self.pending.setVisible(status == "needs_tool_result" and pending is not None)
        if pending is not None:
            self.pending.show_call(pending)
        if not running:
            self.detail.setText("")

    def set_path(self, path: str) -> None:
        """Say where the branch is saved: its folder on the bar, the whole path as tooltip."""
        folder, home = str(Path(path).parent), str(Path.home())
        shown = (
            "~" + folder[len(home) :] if folder == home or folder.startswith(home + "/") else folder
        )
        self.where.setText(f"saved in {shown}")
        self.where.setToolTip(path)
        self.title.setToolTip(path)

    def set_progress(self, calls: int, tokens: int) -> None:
        self.detail.setText(f"{calls} live call(s) · {tokens:,} tokens")

    def set_line(self, line: str) -> None:
        """The agent's latest output line (agent re-runs)."""
        self.detail.setText(line[:80])
        self.detail.setToolTip(line)


class PendingCall(QFrame):
    """The call a paused branch waits on, and an editor for its result."""

    continue_requested = Signal(object)
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.call: dict[str, Any] = {}
        self.label = QLabel(wordWrap=True)
        self.args = QPlainTextEdit(readOnly=True)
        self.result = QPlainTextEdit(
            placeholderText="The tool's result, as the tool would return it"
        )
        for box in (self.args, self.result):
            box.setMaximumHeight(110)
        self.kind = QComboBox()
        self.kind.addItems([TEXT, JSON])
        self.error = QLabel()
        self.error.setStyleSheet("color: #c62828;")
        self.continue_btn = QPushButton("Continue")
        self.continue_btn.setToolTip("Record this result and run the branch on")
        self.stop_btn = QPushButton("Stop here")
        self.stop_btn.setToolTip("End the branch without answering the call")
        self.continue_btn.clicked.connect(self._continue)
        self.stop_btn.clicked.connect(self.stop_requested)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 4, 0, 0)
        grid.addWidget(self.label, 0, 0, 1, 2)
        grid.addWidget(QLabel("Arguments"), 1, 0)
        grid.addWidget(QLabel("Result"), 1, 1)
        grid.addWidget(self.args, 2, 0)
        grid.addWidget(self.result, 2, 1)
        row = QHBoxLayout()
        for w in (self.kind, self.error):
            row.addWidget(w)
        row.addStretch(1)
        row.addWidget(self.continue_btn)
        row.addWidget(self.stop_btn)
        grid.addLayout(row, 3, 0, 1, 2)

    def show_call(self, call: dict[str, Any]) -> None:
        self.call = call
        self.label.setText(
            f"<b>Waiting for a tool result:</b> the branch called "
            f"<b>{_esc(str(call.get('name')))}</b> "
            f"(call {_esc(str(call.get('id')))}),"
            " which the parent never made. Supply its result, or stop here."
        )
        self.args.setPlainText(json.dumps(call.get("input"), indent=2, ensure_ascii=False))

    def value(self) -> Any:
        """The result as typed: text, or parsed JSON (ValueError naming the problem)."""
        text = self.result.toPlainText()
        if self.kind.currentText() == JSON:
            try:
                return json.loads(text)
            except ValueError as err:
                raise ValueError(f"not valid JSON: {err}") from err
        return text

    def _continue(self) -> None:
        try:
            value = self.value()
        except ValueError as err:
            self.error.setText(str(err))
            return
        self.error.setText("")
        self.continue_requested.emit(value)


class BranchesBar(QFrame):
    """A parent's branches (this session's, and those found beside it) in a menu."""

    open_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(BAR_STYLE)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)  # no growth
        self.label = QLabel()
        self.button = QToolButton()
        self.button.setText("Branches ▾")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self)
        self.button.setMenu(self.menu)
        self.entries: list[tuple[str, str]] = []  # (label, path)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 2, 8, 2)
        lay.addWidget(self.label)
        lay.addWidget(self.button)
        lay.addStretch(1)

    def set_branches(self, branches: list[BranchInfo]) -> None:
        """List ``branches``, each named by the parent's step it forked at (its seq)."""
        self.menu.clear()
        self.entries = []
        for b in branches:
            status = status_text(b.status)
            name = Path(b.path).name
            what = f"heal winner {b.healed_by}" if b.healed_by else b.edit
            label = f"step {b.seq} · {what} · {status} — {name}"
            self.entries.append((label, b.path))
            action = self.menu.addAction(label)
            action.setToolTip(b.path)
            action.triggered.connect(lambda _c=False, p=b.path: self.open_requested.emit(p))
        n = len(branches)
        self.label.setText(f"↳ This run has {n} branch{'es' if n != 1 else ''}")
        self.setVisible(n > 0)
