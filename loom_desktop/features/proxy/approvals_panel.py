"""The approvals panel: a queue of held tool calls and the buttons that decide them.

Like mitmproxy's intercept: each held call shows its tool, arguments, the rule
that held it and how long it has waited (a countdown when the timeout is known);
Approve, Deny with an optional reason, Edit & approve (the arguments become
editable and must be valid JSON), and Always allow this tool for the session.
Keys: ``a`` approve, ``d`` deny, ``e`` edit (typing in a text field wins).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from loom_core.proxy.control_client import PendingCall
from loom_core.views.steps import effect_seq
from loom_desktop.document.view import DocumentView
from loom_desktop.features.proxy.approvals_model import ApprovalsModel
from loom_desktop.features.proxy.connection import ProxyConnection
from loom_desktop.keys import APPROVAL_KEYS, bind


def _button(text: str, slot: Callable[[], None]) -> QPushButton:
    button = QPushButton(text)
    button.clicked.connect(slot)
    return button


class _QueueView(QListView):
    """The queue itself takes a/d/e (a list view would use letters for keyboard search)."""

    def __init__(self, keys: dict[str, Callable[[], None]]) -> None:
        super().__init__()
        self.keys = keys

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        action = self.keys.get(event.text().lower())
        if action is not None and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            action()
            event.accept()
            return
        super().keyPressEvent(event)


class ApprovalsPanel(QDockWidget):
    """Shows one proxy's held calls; emits ``held(count)`` when new ones arrive."""

    held = Signal(int)

    def __init__(self, connection: ProxyConnection, parent: QWidget | None = None) -> None:
        super().__init__(f"Approvals — proxy {connection.label}", parent)
        self.setObjectName("approvals")
        self.connection = connection
        self.model = ApprovalsModel(self)
        self.editing = False
        self.run_view: DocumentView | None = None  # the live tab of this proxy's journal, if open
        self._build()
        connection.pending_changed.connect(self._on_pending)
        connection.error.connect(self.status.setText)
        connection.decided.connect(lambda _id: self.status.setText("decision sent"))
        connection.deciding_changed.connect(lambda: self._show_card(keep_edit=True))
        connection.decide_failed.connect(self.problem.setText)  # stays until the next decision

    def _build(self) -> None:
        body = QWidget()
        lay = QVBoxLayout(body)
        # labels wrap and the buttons sit two by two: a long error or tool name must not
        # widen the dock, which would squeeze the step list or grow the window
        self.status = QLabel("waiting for held calls…", wordWrap=True)
        self.list = _QueueView({"a": self.approve, "d": self.deny, "e": self.edit})
        self.list.setModel(self.model)
        self.list.selectionModel().currentRowChanged.connect(lambda *_: self._show_card())
        self.title = QLabel(wordWrap=True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.countdown = QLabel()
        self.args = QPlainTextEdit(readOnly=True)
        self.args.setMaximumHeight(160)
        self.reason = QLineEdit(placeholderText="reason for a deny (optional)")
        self.problem = QLabel(wordWrap=True)
        self.problem.setStyleSheet("color: #c62828;")
        buttons = QGridLayout()
        self.approve_btn = _button("Approve (a)", self.approve)
        self.deny_btn = _button("Deny (d)", self.deny)
        self.edit_btn = _button("Edit && approve (e)", self.edit)
        self.always_btn = _button("Always allow this tool", self.always_allow)
        for i, b in enumerate((self.approve_btn, self.deny_btn, self.edit_btn, self.always_btn)):
            buttons.addWidget(b, i // 2, i % 2)
        for w in (
            self.status,
            self.list,
            self.title,
            self.countdown,
            self.args,
            self.reason,
            self.problem,
        ):
            lay.addWidget(w)
        lay.addLayout(buttons)
        self.setWidget(body)
        bind(self, APPROVAL_KEYS, {"A": self.approve, "D": self.deny, "E": self.edit})
        self._show_card()

    # -- data ------------------------------------------------------------------------
    def _on_pending(self, calls: list[PendingCall]) -> None:
        new = self.model.update(list(calls))
        count = len(self.model.calls)
        self.status.setText(f"{count} held call(s)" if count else "no held calls")
        if self.list.currentIndex().row() < 0 and count:
            self.list.setCurrentIndex(self.model.index(0))
        self._show_card(keep_edit=True)
        self._flag_run(count)
        if new:
            self.held.emit(len(new))  # the window's HeldNotifier tells a user who looks away

    def link_run(self, view: DocumentView | None) -> None:
        """Name the run a held call belongs to, and flag it on that tab's timeline."""
        self.run_view = view

    def _flag_run(self, held: int) -> None:
        view = self.run_view
        widget = getattr(view, "timeline_widget", None)
        if view is not None and widget is not None:
            widget.set_held(view.session.count if held else None)

    def _belongs_to(self) -> str:
        view = self.run_view
        if view is None:
            return ""
        effects = getattr(getattr(view, "doc", None), "effects", None) or []
        after = (
            f"after step {effect_seq(effects, len(effects) - 1)}" if effects else "that starts"
        )  # named by seq, as the step list names it
        return (
            f"<br>belongs to the model call {after} of "
            f"<i>{view.path.rsplit('/', 1)[-1]}</i> (recorded once decided)"
        )

    def current(self) -> PendingCall | None:
        return self.model.call_at(self.list.currentIndex().row())

    def _decidable(self) -> PendingCall | None:
        """The selected call, unless a decision on it is already in flight (keys too)."""
        call = self.current()
        return None if call is None or self.connection.deciding(call.id) else call

    def _show_card(self, keep_edit: bool = False) -> None:
        call = self.current()
        free = call is not None and not self.connection.deciding(call.id)
        for b in (self.approve_btn, self.deny_btn, self.edit_btn, self.always_btn):
            b.setEnabled(free)  # a call whose decision is in flight takes no second one
        if call is None:
            self.title.setText("")
            self.countdown.setText("")
            self.args.setPlainText("")
            return
        self.title.setText(
            f"<b>{call.tool}</b> held by rule <code>{call.rule or '(default)'}</code>"
            + self._belongs_to()
        )
        timeout = self.connection.confirm_timeout
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
        call = self._decidable()
        if call is None:
            return
        if self.editing:
            try:
                edited = json.loads(self.args.toPlainText())
            except ValueError as err:
                self.problem.setText(f"the arguments are not valid JSON: {err}")
                return
            if edited != call.input:
                self._send(call, True, edited_input=edited)
                return
        self._send(call, True)

    def deny(self) -> None:
        call = self._decidable()
        if call is not None:
            self._send(call, False, reason=self.reason.text().strip() or None)

    def edit(self) -> None:
        if self._decidable() is not None:
            self.editing = True
            self.args.setReadOnly(False)
            self.args.setFocus()
            self.problem.setText("edit the arguments, then Approve")

    def always_allow(self) -> None:
        call = self._decidable()
        if call is not None:
            self._send(call, True, always_allow=call.tool)

    def _send(self, call: PendingCall, approve: bool, **extra: object) -> None:
        self.problem.setText("")
        self.editing = False
        self.reason.clear()
        extra = {k: v for k, v in extra.items() if v is not None}
        if self.connection.decide(call.id, approve, **extra):
            self.status.setText(f"sending the decision on {call.tool}…")
