"""Apply an :class:`~loom_core.fork.edits.Edit` to a fork context.

Why a pure function on a copy: the same edit is shown in a preview, estimated by a
dry run, applied for the live re-run and stored in the branch, so applying it must
never change the context it was given. Redaction replaces a tool result's content
but keeps the Item (and its call id), so every tool call still has its result and
no API rejects the edited conversation (loom-harness's heal does the same, §10.2).
"""

from __future__ import annotations

from loom_core.fork.context import ForkContext
from loom_core.fork.edits import Edit, MessageOp
from loom_core.fork.items import estimate_tokens, make_item, normal_item

INJECT_SOURCE = "fork-edit"  # what loom-harness's ``loom fork --inject`` marks its note with


def apply_edit(ctx: ForkContext, edit: Edit) -> ForkContext:
    """A new context with ``edit`` applied: redact, message ops, inject, system, model, tools.

    Raises ValueError naming the problem (a redacted step with no tool result in
    this context, a message index out of range, an unknown op).
    """
    out = ctx.copy()
    if edit.system is not None:
        out.system = edit.system
    for seq in edit.redact:
        _redact(out, seq, edit.redact_text)
    for n, op in enumerate(edit.messages):
        _message_op(out, op, n)
    if edit.inject:
        out.messages.append(make_item("user", edit.inject, INJECT_SOURCE))
        out.origins.append(None)
    if edit.model:
        out.model = edit.model
    if edit.temperature is not None:
        out.temperature = edit.temperature
    if edit.max_tokens is not None:
        out.max_tokens = edit.max_tokens
    if edit.tools is not None:
        out.tools = list(edit.tools)
    return out


def _redact(ctx: ForkContext, seq: int, text: str) -> None:
    hits = [
        k
        for k, origin in enumerate(ctx.origins)
        if origin == seq and ctx.messages[k]["role"] == "tool"
    ]
    if not hits:
        raise ValueError(
            f"cannot redact step {seq}: it produced no tool result in the context at step {ctx.seq}"
        )
    for k in hits:
        ctx.messages[k] = {**ctx.messages[k], "content": text, "tokens": estimate_tokens(text)}


def _message_op(ctx: ForkContext, op: MessageOp, n: int) -> None:
    size = len(ctx.messages)
    if op.op == "delete":
        _check(0 <= op.index < size, op, n, size)
        del ctx.messages[op.index]
        del ctx.origins[op.index]
        return
    if op.op not in ("replace", "insert"):
        raise ValueError(f"message edit {n}: unknown op {op.op!r} (replace, insert or delete)")
    if not isinstance(op.message, dict):
        raise ValueError(f"message edit {n}: {op.op} needs a message")
    item = normal_item(op.message)
    if op.op == "replace":
        _check(0 <= op.index < size, op, n, size)
        ctx.messages[op.index] = item
        ctx.origins[op.index] = None
    else:
        _check(0 <= op.index <= size, op, n, size)
        ctx.messages.insert(op.index, item)
        ctx.origins.insert(op.index, None)


def _check(ok: bool, op: MessageOp, n: int, size: int) -> None:
    if not ok:
        raise ValueError(
            f"message edit {n}: {op.op} at index {op.index} is out of range "
            f"(the context has {size} message(s))"
        )
