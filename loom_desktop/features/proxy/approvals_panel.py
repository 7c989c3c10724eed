"""The approvals panel: one queue of every attached proxy's held tool calls, and the buttons.

Like mitmproxy's intercept: each held call shows its tool, arguments, the rule that
held it, the proxy (and run) it came from, and how long it has waited (a countdown
when the timeout is known); Approve, Deny with an optional reason, Edit & approve
(the arguments become editable and must be valid JSON), and Always allow this tool
for the session. One panel for all proxies: two panels, one per proxy, used to
disagree, and the one in view could say "no held calls" while another held one.

Keys ``a`` approve, ``d`` deny, ``e`` edit work anywhere in the window while a call is
selected here (it is as soon as one is held); typing in a text box still types.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDockWidget,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from loom_core.proxy.control_client import PendingCall
from loom_desktop.document.view import DocumentView
from loom_desktop.features.proxy.approvals_model import ApprovalsModel, Held
from loom_desktop.features.proxy.approvals_text import belongs_to, source_name, status_text
from loom_desktop.features.proxy.connection import ProxyConnection
from loom_desktop.keys import APPROVAL_KEYS, bind


def _button(text: str, slot: Callable[[], None]) -> QPushButton:
    button = QPushButton(text)
    button.clicked.connect(slot)
    return button


class ApprovalsPanel(QDockWidget):
    """Every attached proxy's held calls. ``held(total)`` when new ones arrive;
    ``arrived(connection, call)`` for each of them (the window's notifier)."""

    held = Signal(int)
    arrived = Signal(object, object)

    def __init__(self, window: QMainWindow) -> None:
        super().__init__("Approvals", window)
        self.setObjectName("approvals")
        self.connections: list[ProxyConnection] = []
        self.runs: dict[ProxyConnection, DocumentView | None] = {}  # each proxy's live tab
        self._wiring: dict[ProxyConnection, list[tuple[Any, Callable[..., None]]]] = {}
        self.model = ApprovalsModel(self)
        self.editing = False
        self._build()
        # window-wide, live only while a call is selected here (see the module docstring)
        self.keys = bind(
            window,
            APPROVAL_KEYS,
            {"A": self.approve, "D": self.deny, "E": self.edit},
            Qt.ShortcutContext.WindowShortcut,
        )
        self._show_card()

    def _build(self) -> None:
        body = QWidget()
        lay = QVBoxLayout(body)
        # labels wrap and the buttons sit two by two: a long error or tool name must not
        # widen the dock, which would squeeze the step list or grow the window
        self.status = QLabel("waiting for held calls…", wordWrap=True)
        self.sources = QLabel(wordWrap=True)
        self.sources.setStyleSheet("color: gray;")
        self.list = QListView()
        self.list.setModel(self.model)
        self.list.selectionModel().currentRowChanged.connect(lambda *_: self._show_card())
        self.title = QLabel(wordWrap=True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.countdown = QLabel()
        self.args = QPlainTextEdit(readOnly=True)
        self.args.setMaximumHeight(160)
        self.reason = QLineEdit(placeholderText="reason for a deny (optional; Enter denies)")
        self.reason.returnPressed.connect(self.deny)
        self.problem = QLabel(wordWrap=True)
        self.problem.setStyleSheet("color: #c62828;")
        buttons = QGridLayout()
        self.approve_btn = _button("Approve (a)", self.approve)
        self.deny_btn = _button("Deny (d)", self.deny)
        self.edit_btn = _button("Edit && approve (e)", self.edit)
        self.always_btn = _button("Always allow this tool", self.always_allow)
        for i, b in enumerate((self.approve_btn, self.deny_btn, self.edit_btn, self.always_btn)):
            buttons.addWidget(b, i // 2, i % 2)
        for w in (self.status, self.sources, self.list, self.title, self.countdown, self.args):
            lay.addWidget(w)
        lay.addWidget(self.reason)
        lay.addWidget(self.problem)
        lay.addLayout(buttons)
        self.setWidget(body)

    # -- proxies -----------------------------------------------------------------------
    def add(self, connection: ProxyConnection, run: DocumentView | None = None) -> None:
        """List ``connection``'s held calls here too; ``run`` is its live tab, if open."""
        self.connections.append(connection)
        self.runs[connection] = run
        wiring: list[tuple[Any, Callable[..., None]]] = [
            (connection.pending_changed, lambda calls, c=connection: self._on_pending(c, calls)),
            (connection.error, self.status.setText),
            (connection.decided, lambda _id: self._show_status("decision sent · ")),
            (connection.deciding_changed, lambda: self._show_card(keep_edit=True)),
            (connection.decide_failed, self.problem.setText),  # stays until the next decision
        ]
        for signal, slot in wiring:
            signal.connect(slot)
        self._wiring[connection] = wiring
        self._show_sources()

    def remove(self, connection: ProxyConnection) -> None:
        """Stop listing ``connection`` (its proxy was stopped); its rows go."""
        if connection not in self.connections:
            return
        for signal, slot in self._wiring.pop(connection, []):
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):  # already gone with its object
                pass
        self._flag_run(connection, 0)
        self.connections.remove(connection)
        self.runs.pop(connection, None)
        self.model.forget(connection)
        self._show_status()
        self._show_sources()
        self._show_card()

    def _show_sources(self) -> None:
        names = [source_name(c, self.runs.get(c)) for c in self.connections]
        self.sources.setText("watching " + "; ".join(names) if names else "no proxy attached")

    # -- data ------------------------------------------------------------------------
    def _on_pending(self, connection: ProxyConnection, calls: list[PendingCall]) -> None:
        name = source_name(connection, self.runs.get(connection))
        new = self.model.update(list(calls), connection, name)
        count = len(self.model.rows)
        self._show_status()
        if self.list.currentIndex().row() < 0 and count:
            self.list.setCurrentIndex(self.model.index(0))
        self._show_card(keep_edit=True)
        self._flag_run(connection, len(calls))
        for call in new:
            self.arrived.emit(connection, call)
        if new:  # the window's status bar tells the user at once: how many are held in
            self.held.emit(count)  # all, as the panel says (not "1" for the newest of two)

    def _show_status(self, prefix: str = "") -> None:
        self.status.setText(prefix + status_text(self.model.rows))

    def link_run(self, view: DocumentView | None, connection: ProxyConnection) -> None:
        """Name the run ``connection``'s held calls belong to, and flag it on its timeline."""
        self.runs[connection] = view
        self._show_sources()

    def _flag_run(self, connection: ProxyConnection, held: int) -> None:
        view = self.runs.get(connection)
        widget = getattr(view, "timeline_widget", None)
        if view is not None and widget is not None:
            widget.set_held(view.session.count if held else None)

    def current(self) -> PendingCall | None:
        return self.model.call_at(self.list.currentIndex().row())

    def current_held(self) -> Held | None:
        return self.model.held_at(self.list.currentIndex().row())

    def select(self, connection: ProxyConnection, call_id: str) -> bool:
        """Select ``connection``'s call ``call_id`` (False when it is no longer held)."""
        row = self.model.row_of(connection, call_id)
        if row >= 0:
            self.list.setCurrentIndex(self.model.index(row))
        return row >= 0

    def _decidable(self) -> Held | None:
        """The selected call, unless a decision on it is already in flight (keys too)."""
        held = self.current_held()
        if held is None or held.source.deciding(held.call.id):
            return None
        return held

    def _show_card(self, keep_edit: bool = False) -> None:
        held = self.current_held()
        free = self._decidable() is not None
        for b in (self.approve_btn, self.deny_btn, self.edit_btn, self.always_btn):
            b.setEnabled(free)  # a call whose decision is in flight takes no second one
        for key in getattr(self, "keys", []):
            key.setEnabled(free)
        if held is None:
            self.title.setText("")
            self.countdown.setText("")
            self.args.setPlainText("")
            return
        call, connection = held.call, held.source
        self.title.setText(
            f"<b>{call.tool}</b> held by rule <code>{call.rule or '(default)'}</code>"
            f" on proxy {connection.label}" + belongs_to(self.runs.get(connection))
        )
        timeout = connection.confirm_timeout
        self.countdown.setText(
            f"denied automatically in {max(0.0, timeout - call.age_s):.0f} s"
            if timeout
            else f"waiting for {call.age_s:.0f} s"
        )
        if not (keep_edit and self.editing):
            self.editing = False
            self.args.setReadOnly(True)
            self.args.setPlainText(json.dumps(call.input, indent=2, ensure_ascii=False))

    # -- decisions ---------------------------------------------------------------------
    def approve(self) -> None:
        held = self._decidable()
        if held is None:
            return
        if self.editing:
            try:
                edited = json.loads(self.args.toPlainText())
            except ValueError as err:
                self.problem.setText(f"the arguments are not valid JSON: {err}")
                return
            if edited != held.call.input:
                self._send(held, True, edited_input=edited)
                return
        self._send(held, True)

    def deny(self) -> None:
        held = self._decidable()
        if held is not None:
            self._send(held, False, reason=self.reason.text().strip() or None)

    def edit(self) -> None:
        if self._decidable() is not None:
            self.editing = True
            self.args.setReadOnly(False)
            self.args.setFocus()
            self.problem.setText("edit the arguments, then Approve")

    def always_allow(self) -> None:
        held = self._decidable()
        if held is not None:
            self._send(held, True, always_allow=held.call.tool)

    def _send(self, held: Held, approve: bool, **extra: object) -> None:
        self.problem.setText("")
        self.editing = False
        self.reason.clear()
        extra = {k: v for k, v in extra.items() if v is not None}
        if held.source.decide(held.call.id, approve, **extra):
            self.status.setText(f"sending the decision on {held.call.tool}…")
