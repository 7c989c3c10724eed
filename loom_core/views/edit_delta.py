"""What a fork's ``edit`` changed in an agent's context, message by message.

Why: an ``edit`` effect replaces the agent's whole message list with a snapshot
(loom-format.md §10.3), so read naively every message of the first call after a
fork looks new. Lining the snapshot up against the list it replaced tells the
messages the edit injected, replaced, redacted or removed apart from those that
only arrived since the previous model call (the reply and its tool results).

Messages are matched by role and identity (an assistant turn by its tool call ids,
a tool result by its call id, anything else by its text), then compared by text.
The fork's reconstruction appends the shield's notes about blocked calls to an
assistant text, as the recording agent saw it, so a text that merely grew is the
same message.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from loom_core.diff.align import align, intern_tokens
from loom_core.views.context import AgentContext, ContextIndex
from loom_core.views.frames import Frame, Message, message_of

NEW, INJECTED, REPLACED, REDACTED = "new", "injected", "replaced", "redacted"
REDACTED_PREFIX = "[redacted"  # loom-harness's and our redaction note both start so
INJECT_SOURCE = "fork-edit"  # the source of a message an edit added (loom-format.md §10.3)
MAX_MESSAGES = 20_000  # per side: beyond this the delta is not worked out (all shown as new)


@dataclass
class EditDelta:
    """Marks for the edited list's messages, and what the edit took away."""

    marks: dict[int, str] = field(default_factory=dict)  # message -> NEW | INJECTED | ...
    was: dict[int, Message] = field(default_factory=dict)  # replaced/redacted: the old message
    removed: list[tuple[int, Message]] = field(default_factory=list)  # (before message k, old)

    def changes(self) -> dict[str, int]:
        """How many messages the edit injected, replaced, redacted and removed."""
        counts = {INJECTED: 0, REPLACED: 0, REDACTED: 0, "removed": len(self.removed)}
        for mark in self.marks.values():
            if mark != NEW:
                counts[mark] += 1
        return counts

    def summary(self) -> str:
        """``injected 1 message, redacted 1`` (or ``no message changed``)."""
        parts = [
            f"{verb} {n} message{'s' if n != 1 else ''}" for verb, n in self.changes().items() if n
        ]
        return ", ".join(parts) or "no message changed"


def _identity(m: Message) -> Hashable:
    if m.role == "assistant" and m.tool_calls:
        return ("assistant", tuple(str(c.get("id") or c.get("name")) for c in m.tool_calls))
    if m.role == "tool" and m.call_id:
        return ("tool", m.call_id)
    return (m.role, m.text)


def _same_text(old: Message, new: Message) -> bool:
    if old.text == new.text or (old.role == "assistant" and new.text.startswith(old.text)):
        return True
    try:  # a structured tool result: JSON in one list, Python's str() in the snapshot
        return bool(json.loads(old.text) == json.loads(new.text))
    except ValueError:
        return False


def _messages(index: ContextIndex, ctx: AgentContext, n: int) -> list[Message]:
    return [message_of(index, item) for item in ctx.items[:n]]


def edit_delta(
    index: ContextIndex, old: AgentContext, new: AgentContext, n: int | None = None
) -> EditDelta | None:
    """The delta of ``new`` (its first ``n`` messages) against ``old``, the list it replaced.

    Messages of ``old`` the agent's previous model call did not see are marked NEW.
    ``None`` when a list is too long to line up cheaply.
    """
    n = len(new.items) if n is None else n
    lined = _lined_up(index, old, new, n)
    if lined is None:
        return None
    before, after, pairs = lined
    prev = old.last_model
    seen = index.frame_len[prev] if 0 <= prev < len(index.frame_len) else 0
    deletes = _deletes(index)
    delta = EditDelta()
    dropped: list[Message] = []  # between two matches: old messages without a partner
    added: list[int] = []  # ... and new ones
    for i, j in pairs:  # matches, drops and inserts only
        if j is None:
            assert i is not None  # align never pairs two gaps
            dropped.append(before[i])
        elif i is None:
            added.append(j)
        else:
            _settle(delta, new, after, dropped, added, j, deletes)
            dropped, added = [], []
            if not _same_text(before[i], after[j]):
                delta.marks[j], delta.was[j] = _changed(after[j]), before[i]
            elif i >= seen:
                delta.marks[j] = NEW
    _settle(delta, new, after, dropped, added, n, deletes)
    return delta


def _lined_up(
    index: ContextIndex, old: AgentContext, new: AgentContext, n: int
) -> tuple[list[Message], list[Message], list[tuple[int | None, int | None]]] | None:
    """``old``'s messages, ``new``'s first ``n``, and their alignment by identity
    (``None`` when a list is too long to line up cheaply)."""
    if len(old.items) > MAX_MESSAGES or n > MAX_MESSAGES:
        return None
    before, after = _messages(index, old, len(old.items)), _messages(index, new, n)
    ta, tb = intern_tokens(map(_identity, before), map(_identity, after))
    return before, after, list(align(ta, tb, substitution=2))


def carried(index: ContextIndex, effect: int) -> list[tuple[int, int]]:
    """(position in the replaced list, position in the snapshot) of every message the
    ``edit`` effect ``effect`` carried over unchanged, ascending.

    Why: a fork's edit re-sends the messages it kept as a snapshot that names no
    effect, so without this the first call after the fork seems to have seen none of
    the parent's tool results: the doctor would say no model call saw them, and a
    redaction by step could not find them."""
    pair = index.edits.get(effect)
    if pair is None:
        return []
    old, new = pair
    lined = _lined_up(index, old, new, _snapshot_length(new))
    if lined is None:
        return []
    before, after, pairs = lined
    return [
        (i, j)
        for i, j in pairs
        if i is not None and j is not None and _same_text(before[i], after[j])
    ]


def snapshot_origins(index: ContextIndex, ctx: AgentContext) -> dict[int, int]:
    """Position in ``ctx`` -> the effect whose message the edit that made ``ctx``
    carried there unchanged (through earlier edits too); empty when no edit made it."""
    chain: list[int] = []  # the edits behind ctx, newest first
    while len(chain) <= len(index.edits):  # an edit is never behind itself; bounded anyway
        effect = edited_by(index, ctx)
        if effect is None:
            break
        chain.append(effect)
        ctx = index.edits[effect][0]
    origins: dict[int, int] = {}
    for effect in reversed(chain):  # oldest first: each maps through the one before it
        old = index.edits[effect][0]
        found: dict[int, int] = {}
        for i, j in carried(index, effect):
            item = old.items[i]
            eff = origins.get(i) if item[0] == "snapshot" else message_of(index, item).effect
            if eff is not None:
                found[j] = eff
        origins = found
    return origins


def _settle(
    delta: EditDelta,
    new: AgentContext,
    after: list[Message],
    dropped: list[Message],
    added: list[int],
    at: int,
    deletes: bool,
) -> None:
    """Mark a run of unpartnered messages: an injected one as such, one that took the place
    of an old message of its role as rewritten, the old ones left as removed (when the edit
    deleted messages at all). Anything else is a part of a recorded request the log never
    stored (a proxy branch's list is the exact request), so it is not marked."""
    for j in added:
        if _injected(new.items[j]):
            delta.marks[j] = INJECTED
            continue
        same = next((k for k, old in enumerate(dropped) if old.role == after[j].role), None)
        if same is not None:
            delta.marks[j], delta.was[j] = _changed(after[j]), dropped.pop(same)
    if deletes:
        delta.removed.extend((at, old) for old in dropped)


def _changed(m: Message) -> str:
    return REDACTED if m.text.startswith(REDACTED_PREFIX) else REPLACED


def _injected(item: Any) -> bool:
    """A message the edit added: loom-harness's ``--inject`` and our dialog mark it so.

    Any other message only in the edited list is not called injected: a proxy branch's
    list is the exact recorded request, which holds parts the log never stored."""
    return (
        item[0] == "snapshot"
        and isinstance(item[1], dict)
        and item[1].get("source") == INJECT_SOURCE
    )


def _deletes(index: ContextIndex) -> bool:
    """Whether the branch's own edit deleted messages (else a message only in the replaced
    list is a reconstruction detail, not something the edit removed)."""
    fork = (getattr(index.doc.header, "model_extra", None) or {}).get("fork")
    edit = fork.get("edit") if isinstance(fork, dict) else None
    ops = edit.get("messages") if isinstance(edit, dict) else None
    return isinstance(ops, list) and any(
        isinstance(op, dict) and op.get("op") == "delete" for op in ops
    )


def delta_of_edit(index: ContextIndex, effect: int) -> EditDelta | None:
    """What the ``edit`` effect ``effect`` changed (``None``: no model call used it)."""
    pair = index.edits.get(effect)
    if pair is None:
        return None
    old, new = pair
    return edit_delta(index, old, new, _snapshot_length(new))


def _snapshot_length(new: AgentContext) -> int:
    """The edited list grew after the edit: its snapshot is the leading part."""
    return next((k for k, item in enumerate(new.items) if item[0] != "snapshot"), len(new.items))


def edited_by(index: ContextIndex, ctx: AgentContext) -> int | None:
    """The edit effect that made ``ctx`` (``None`` when no edit did)."""
    return next((e for e, (_old, new) in index.edits.items() if new is ctx), None)


def frame_delta(frame: Frame) -> EditDelta | None:
    """For the first call after an edit: what is new since the previous call and what the
    edit changed (``None`` for any other frame: its ``new_from`` says what is new)."""
    if not frame.rewritten:
        return None
    effect = edited_by(frame.index, frame.ctx)
    if effect is None:
        return None
    old, new = frame.index.edits[effect]
    return edit_delta(frame.index, old, new, frame.n)
