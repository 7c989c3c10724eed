"""The fork dialog's state without widgets: the context at a fork step and what the user changed.

Why Qt-free: turning what a user did in the dialog into an :class:`Edit` is the part
that must be exactly right -- only what changed, expressed in the order
:func:`loom_core.fork.apply.apply_edit` applies it (redactions, then message ops, then
the injected note) -- so it is unit tested without a window. The widgets only call
these methods and draw :attr:`ForkDraft.rows`.

Original messages never move: an inserted message is a new row, a deleted one stays
(struck through, restorable), so the message ops are derived by one walk over the
rows, and an untouched dialog maps to an empty edit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loom_core.fork.apply import INJECT_SOURCE
from loom_core.fork.context import ForkContext
from loom_core.fork.edits import REDACTED, Edit, MessageOp
from loom_core.providers.base import ToolSpec


@dataclass
class DraftRow:
    """One message as the dialog shows it: the Item it started as, and the user's changes."""

    item: dict[str, Any]  # the Item (for an inserted row: the new user message)
    origin: int | None  # the effect seq that produced it (what a redaction names)
    original: bool  # False for a message the user inserted
    text: str  # the content as edited
    deleted: bool = False
    redacted: bool = False

    @property
    def role(self) -> str:
        return str(self.item.get("role") or "user")

    @property
    def source(self) -> str:
        return str(self.item.get("source") or "")

    @property
    def edited(self) -> bool:
        """True when the text differs from what the model saw (always for an inserted row)."""
        return not self.original or self.text != str(self.item.get("content") or "")

    def status(self) -> str:
        """One word for the list: new, deleted, edited, redacted, or empty."""
        if not self.original:
            return "new"
        if self.deleted:
            return "deleted"
        if self.edited:
            return "edited"
        return "redacted" if self.redacted else ""

    def shown_text(self) -> str:
        """What the model will see for this message in the branch."""
        if self.redacted and not self.edited and not self.deleted:
            return REDACTED
        return self.text


class ForkDraft:
    """The context at the fork step plus the user's changes; :meth:`to_edit` maps them."""

    def __init__(self, ctx: ForkContext) -> None:
        self.ctx = ctx
        origins = list(ctx.origins) + [None] * (len(ctx.messages) - len(ctx.origins))
        self.rows = [
            DraftRow(dict(m), origins[k], True, str(m.get("content") or ""))
            for k, m in enumerate(ctx.messages)
        ]
        self.system = ctx.system
        self.tools_on = [True] * len(ctx.tools)
        self.note = ""  # injected as a user message after the context (Edit.inject)

    # -- messages ---------------------------------------------------------------------
    def set_text(self, row: int, text: str) -> None:
        self.rows[row].text = text

    def insert_user(self, at: int, text: str = "") -> int:
        """A new user message before row ``at`` (``len(rows)`` appends); returns its row."""
        at = max(0, min(at, len(self.rows)))
        item = {"role": "user", "content": "", "source": INJECT_SOURCE}
        self.rows.insert(at, DraftRow(item, None, False, text))
        return at

    def delete(self, row: int) -> None:
        """An inserted message goes away; an original one is marked deleted (restorable)."""
        if self.rows[row].original:
            self.rows[row].deleted = True
        else:
            del self.rows[row]

    def restore(self, row: int) -> None:
        self.rows[row].deleted = False

    def revert(self, row: int) -> None:
        """Undo every change to an original message (text, deletion, redaction)."""
        r = self.rows[row]
        if r.original:
            r.text, r.deleted, r.redacted = str(r.item.get("content") or ""), False, False

    def can_redact(self, row: int) -> bool:
        """Only a recorded tool result can be redacted (the edit names its effect seq)."""
        r = self.rows[row]
        return r.original and r.role == "tool" and r.origin is not None

    def set_redacted(self, row: int, on: bool) -> None:
        if on and not self.can_redact(row):
            raise ValueError(f"message {row} is not a recorded tool result; it cannot be redacted")
        self.rows[row].redacted = on

    # -- tools --------------------------------------------------------------------------
    def set_tool(self, k: int, on: bool) -> None:
        self.tools_on[k] = on

    def offered_tools(self) -> list[ToolSpec]:
        return [t for t, on in zip(self.ctx.tools, self.tools_on, strict=True) if on]

    # -- the edit -----------------------------------------------------------------------
    def redact_seqs(self) -> list[int]:
        """Seqs of redacted results that are neither deleted nor rewritten (those win)."""
        seqs = {
            r.origin
            for r in self.rows
            if r.redacted and r.original and not r.deleted and not r.edited
        }
        return sorted(s for s in seqs if s is not None)

    def message_ops(self) -> list[MessageOp]:
        """The ops that turn the (redacted) context into the rows, in apply order.

        ``pos`` is where the next row sits in the list being edited: a deleted row
        is removed there, a rewritten one replaced, an inserted one inserted.
        """
        ops: list[MessageOp] = []
        pos = 0
        for r in self.rows:
            if not r.original and not r.text.strip():
                continue  # an empty insert is left out (APIs refuse empty messages)
            if not r.original:
                ops.append(MessageOp("insert", pos, {**r.item, "content": r.text}))
            elif r.deleted:
                ops.append(MessageOp("delete", pos))
                continue
            elif r.edited:
                fresh = {k: v for k, v in r.item.items() if k != "tokens"}  # re-estimated
                ops.append(MessageOp("replace", pos, {**fresh, "content": r.text}))
            pos += 1
        return ops

    def warnings(self) -> list[str]:
        """Edits model APIs reject: a tool call left without its result, or the reverse."""
        kept = [r for r in self.rows if not r.deleted]
        calls = {
            str(c.get("id"))
            for r in kept
            if r.role == "assistant"
            for c in r.item.get("tool_calls") or []
        }
        answered = {str(r.item.get("tool_call_id")) for r in kept if r.role == "tool"}
        out = []
        if calls - answered:
            out.append(
                "a tool call is left without its result (redact the result instead of deleting it)"
            )
        if answered - calls:
            out.append("a tool result is left without the call that asked for it")
        if any(not r.original and not r.text.strip() for r in self.rows):
            out.append("an inserted message is empty (it is left out)")
        return out

    def to_edit(self, model: str = "", reason: str = "") -> Edit:
        """Only what changed compared with the context at the fork step (plus the reason)."""
        model = model.strip()
        tools = self.offered_tools()
        return Edit(
            system=self.system if self.system != self.ctx.system else None,
            inject=self.note if self.note.strip() else None,
            redact=self.redact_seqs(),
            messages=self.message_ops(),
            model=model if model and model != self.ctx.model else None,
            tools=None if len(tools) == len(self.ctx.tools) else tools,
            reason=reason.strip(),
        )
