"""One-line descriptions of steps, for the step list, the CLI and tooltips.

Computed on demand from a step's payload (never stored for all steps), with the
same shapes loom-harness's ``loom watch`` uses: a model step that calls tools is
described by its calls, anything else by its text.
"""

from __future__ import annotations

import json
from typing import Any

from .document import text_and_calls
from .timeline import K_EPISODE, K_MODEL, Timeline


def clip(text: str, limit: int) -> str:
    """Collapse whitespace and cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


def call_text(call: dict[str, Any]) -> str:
    """``name({json args})`` as loom-harness shows a call."""
    return f"{call.get('name', '')}({json.dumps(call.get('input', {}), ensure_ascii=False)})"


def step_summary(tl: Timeline, step: int, limit: int = 120) -> str:
    """What happened at ``step``, in one line."""
    doc = tl.doc
    if tl.kind[step] == K_EPISODE:
        return clip(doc.episodes[tl.episode_of[step]], limit)
    effect = tl.effect_of[step]
    value = doc.result(effect)
    if tl.kind[step] == K_MODEL and isinstance(value, dict):
        text, calls = text_and_calls(value)
        if calls:
            return clip("calls " + ", ".join(call_text(c) for c in calls), limit)
        return clip(text, limit)
    if isinstance(value, str):
        return clip(value, limit)
    return clip(json.dumps(value, ensure_ascii=False), limit)
