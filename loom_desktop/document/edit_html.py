"""HTML for a fork's edit: the ``edit`` step itself, and the edit's marks in the next frame.

Why apart from :mod:`.context_html`: an edit replaces the agent's message list, so
the first frame after it would show every message as new and the edit step as a
dump of the whole list. :mod:`loom_core.views.edit_delta` lines the two lists up; this
module says in words what was injected, replaced, redacted or removed.
"""

from __future__ import annotations

import html
from typing import Any

from loom_core.fork.edits import Edit
from loom_core.views.edit_delta import INJECTED, NEW, REDACTED, REPLACED, EditDelta, delta_of_edit
from loom_core.views.frames import Message, message_of

EDIT_BG, EDIT_RULE = "#fce4ec", "#d81b60"  # the timeline's colour of edit steps
TAGS = {
    NEW: "NEW",
    INJECTED: "EDIT · injected",
    REPLACED: "EDIT · replaced",
    REDACTED: "EDIT · redacted",
}
WAS_FOLD = 400  # characters of a replaced message's old text shown


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def mark_tag(mark: str) -> str:
    """The tag after a message's role: NEW (yellow) or what the edit did (pink)."""
    if not mark:
        return ""
    color = "#f57f17" if mark == NEW else EDIT_RULE
    return f" <span style='color:{color}; font-weight:bold'>{TAGS.get(mark, mark)}</span>"


def was_html(old: Message) -> str:
    """A replaced or redacted message's text before the edit, struck through and clipped."""
    text = old.text if len(old.text) <= WAS_FOLD else old.text[:WAS_FOLD] + "…"
    return (
        f"<p style='color:#757575'>before the edit:</p>"
        f"<pre style='color:#757575'><s>{_esc(text)}</s></pre>"
    )


def removed_html(old: Message) -> str:
    """A message the edit deleted, where it used to be."""
    who = old.role + (f" · {old.name}" if old.name else "")
    text = old.text if len(old.text) <= WAS_FOLD else old.text[:WAS_FOLD] + "…"
    return (
        f"<p style='background-color:{EDIT_BG}; margin-top:6px'>"
        f"<span style='color:{EDIT_RULE}'>▌</span><b>{_esc(who)}</b>"
        f" <span style='color:{EDIT_RULE}; font-weight:bold'>EDIT · removed</span></p>"
        f"<pre style='color:#757575'><s>{_esc(text)}</s></pre>"
    )


def provenance_line(fork: Any) -> str:
    """The branch's own words for its edit (``fork.edit``), when it has them."""
    edit = fork.get("edit") if isinstance(fork, dict) else None
    if not isinstance(edit, dict):
        return ""
    try:
        words = Edit.from_dict(dict(edit)).describe()
    except (TypeError, ValueError):
        return ""
    reason = str(fork.get("reason") or edit.get("reason") or "")
    return (
        f"<div class='hdr'>Fork edit: {_esc(words)}"
        + (f" — reason: {_esc(reason)}" if reason else "")
        + "</div>"
    )


def _change(k: int, mark: str, after: Message, delta: EditDelta) -> str:
    who = after.role + (f" · {after.name}" if after.name else "")
    old = delta.was.get(k)
    return (
        f"<p style='background-color:{EDIT_BG}; margin-top:6px'>"
        f"<span style='color:{EDIT_RULE}'>▌</span><b>{_esc(who)}</b>{mark_tag(mark)}"
        f" <span class='hdr'>(message {k})</span></p>"
        f"{was_html(old) if old is not None else ''}<pre>{_esc(after.text)}</pre>"
    )


def edit_step_html(tl: Any, step: int) -> list[str]:
    """The page body of an ``edit`` step: what the edit changed, message by message."""
    effect = tl.effect_of[step]
    index = tl.context
    fork = (getattr(tl.doc.header, "model_extra", None) or {}).get("fork")
    out = [
        "<div class='sec'>Edit: the context of the next model call was changed here</div>",
        provenance_line(fork),
    ]
    delta = delta_of_edit(index, effect) if index is not None else None
    if delta is None:
        out.append(
            "<div class='hdr'>No model call used this edit; its context is in the "
            "Raw JSON tab.</div>"
        )
        return out
    out.append(f"<div class='hdr'>{_esc(delta.summary())}</div>")
    new = index.edits[effect][1]
    for k, mark in sorted(delta.marks.items()):
        if mark != NEW:
            out.append(_change(k, mark, message_of(index, new.items[k]), delta))
    out.extend(removed_html(m) for _k, m in delta.removed)
    return out
