"""Place shield decisions at the step where they happened (loom-format.md §1.6, §7.8).

``shield_events`` carry no step index. A denied call left a notice naming the
call in the screened response's text; an approved call is still among the
response's tool calls. So each event goes to the first model step, at or after
the previous event's step, that shows it; events that name no call (taint) stay
at the previous event's step, or the first model step.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .document import text_and_calls

if TYPE_CHECKING:
    from .timeline import Timeline


def signature(tool: str, args: Any) -> str:
    """``name(<sorted JSON>)``: how the shield names a call (§7.1)."""
    return f"{tool}({json.dumps(args, sort_keys=True, default=str)})"


def _shows(tl: "Timeline", step: int, event: Any) -> bool:
    effect = tl.effect_of[step]
    value = tl.doc.result(effect)
    text, calls = text_and_calls(value)
    if event.action == "deny":
        return ("Blocked tool call " + signature(event.tool, event.input)) in text
    return any(c.get("name") == event.tool and c.get("input") == event.input for c in calls)


def place_shield_events(doc: Any, tl: "Timeline") -> dict[int, list[int]]:
    """Map step -> indices into ``doc.shield_events``."""
    events = doc.shield_events
    if not events:
        return {}
    from .timeline import K_MODEL

    model_steps = [s for s in range(len(tl)) if tl.kind[s] == K_MODEL]
    placed: dict[int, list[int]] = {}
    cursor = 0  # index into model_steps
    for idx, event in enumerate(events):
        where = None
        if event.tool:
            where = next((k for k in range(cursor, len(model_steps))
                          if _shows(tl, model_steps[k], event)), None)
        if where is not None:
            cursor = where
        if model_steps:
            placed.setdefault(model_steps[where if where is not None else cursor], []).append(idx)
        elif len(tl):
            placed.setdefault(len(tl) - 1, []).append(idx)
    return placed
