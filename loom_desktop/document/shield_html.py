"""One shield decision as a line of the context view.

Why its own words for each decision: the recorded event is terse (``action``, ``via``),
and what a reader needs differs per kind -- who decided, the operator's reason for a
deny, that nobody answered for a timeout, the pattern an "always allow" opened, and
for an edit the arguments that actually ran, marked as edited, beside what the model
asked for. Any JSON value in any field is shown raw, never a traceback.
"""

from __future__ import annotations

import html
import json
from typing import Any

from loom_core.views.shield_place import edited_input
from loom_core.views.steps import decision_mark

EDITED_MARK = "✎ edited by the operator"


def _esc(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else str(value), quote=False)


def _call(tool: Any, args: Any) -> str:
    return f"{_esc(tool)}({_esc(json.dumps(args, ensure_ascii=False, default=str))})"


def _extras(event: Any) -> dict[str, Any]:
    extra = getattr(event, "model_extra", None)
    return extra if isinstance(extra, dict) else {}


def shield_line_html(event: Any) -> str:
    """``★ shield <action> via <via> [by who]: call`` (◆ for a denial, the sign its step
    carries in the list and on the timeline) and what else the decision says."""
    extra = _extras(event)
    by = f" by {_esc(event.by)}" if event.by else ""
    head = f"{decision_mark(event.action)} shield {_esc(event.action)} via {_esc(event.via)}{by}: "
    edited, ran = edited_input(event)
    if not event.tool:
        what = "(no call)"
    elif edited:
        what = (
            f"{_call(event.tool, ran)} <span class='edited'>{EDITED_MARK}</span>"
            f" — the model asked {_call(event.tool, event.input)}"
        )
    else:
        what = _call(event.tool, event.input)
    tail = []
    if event.via == "timeout":
        tail.append("nobody answered in time")
    if extra.get("reason"):
        tail.append(f"reason: {_esc(extra['reason'])}")
    if extra.get("always_allow"):
        tail.append(f"always allow {_esc(repr(extra['always_allow']))} from now on")
    tail.append(f"rule {_esc(repr(event.rule or ''))}")
    return f"<div class='shield'>{head}{what} — {' — '.join(tail)}</div>"
