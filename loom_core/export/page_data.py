"""The data a self-contained HTML page of a run carries: rows, details and contexts, compactly.

Why this shape: the page must stay under ten times the trace's size and open a 100,000-step
run, so nothing is repeated. Rows are the step list's own rows (:func:`step_rows`: one step,
one number, in the app, the CLI and the page). A model step carries only the messages that
are new since its agent's previous call plus how many of that call's messages it kept; the
page rebuilds a context by walking back that chain, as the app's frames do. Texts longer
than :data:`TEXT_LIMIT` are cut, saying how much was left out.
"""

from __future__ import annotations

import json
from typing import Any

from loom_core.formats.document import Document, text_and_calls
from loom_core.views.frames import Message, frame_at
from loom_core.views.palette import KIND_COLORS, MARKS
from loom_core.views.recorded import content_missing, new_from, recorded_messages
from loom_core.views.steps import FLAG_NAMES, call_text, decision_mark, readable_time, step_rows
from loom_core.views.timeline import K_EPISODE, K_MODEL, KIND_NAMES, Timeline, build_timeline

TEXT_LIMIT = 20_000
FLAG_NAME = dict(FLAG_NAMES)  # flag bit -> the name a row lists it by
FORMAT = "loom-desktop-page/1"


def _cut(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    return text[:TEXT_LIMIT] + f"\n… ({len(text) - TEXT_LIMIT:,} more characters not exported)"


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return _cut(value)
    return _cut(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _message(m: Message) -> list[Any]:
    """``[role, text, [call texts]]``: a message as the page draws it."""
    return [
        m.role + (f" · {m.name}" if m.name else ""),
        _cut(m.text),
        [call_text(c) for c in m.tool_calls],
    ]


def _context(tl: Timeline, effect: int, step_of: dict[int, int]) -> dict[str, Any] | None:
    """``{prev, keep, new}``: the call's context as a link to the previous call's."""
    doc = tl.doc
    recorded = recorded_messages(doc, effect)
    if recorded is not None:
        keep = new_from(doc, effect, recorded)
        prev = (
            next(
                (
                    j
                    for j in range(effect - 1, -1, -1)
                    if doc.effects[j].kind == "model"
                    and doc.effects[j].depth == doc.effects[effect].depth
                ),
                None,
            )
            if keep
            else None
        )
        return {
            "prev": step_of.get(prev, -1) if prev is not None else -1,
            "keep": keep,
            "new": [_message(m) for m in recorded[keep:]],
            "recorded": True,
        }
    if content_missing(doc) or tl.context is None:
        return None
    frame = frame_at(tl.context, effect)
    if frame is None:
        return None
    keep = 0 if frame.rewritten or frame.prev_effect is None else frame.new_from
    prev = step_of.get(frame.prev_effect, -1) if keep and frame.prev_effect is not None else -1
    return {"prev": prev, "keep": keep, "new": [_message(m) for m in frame.messages(keep)]}


def _detail(tl: Timeline, step: int, step_of: dict[int, int]) -> dict[str, Any]:
    kind = tl.kind[step]
    if kind == K_EPISODE:
        return {"text": _cut(tl.doc.episodes[tl.episode_of[step]])}
    effect = tl.effect_of[step]
    value = tl.doc.result(effect)
    if kind != K_MODEL:
        when = readable_time(value) if tl.kind_name(step) == "time" else None
        return {"result": _shown(value) if when is None else f"{when}\n(recorded as {value!r})"}
    text, calls = text_and_calls(value)
    stop = value.get("stop_reason", "") if isinstance(value, dict) else ""
    return {
        "text": _cut(text),
        "calls": [call_text(c) for c in calls],
        "stop": stop if isinstance(stop, str) else str(stop),
        "context": _context(tl, effect, step_of),
    }


def _decision(event: dict[str, Any]) -> str:
    """``◆ deny bash({...}) via operator``: a shield decision placed on a step, with its
    sign (◆ a denial, ★ another decision)."""
    tool = event.get("tool") or ""
    args = json.dumps(event.get("input"), ensure_ascii=False, default=str) if tool else ""
    action = event.get("action", "")
    return (
        f"{decision_mark(action)} {action} {tool}{f'({args})' if tool else ''} "
        f"via {event.get('via', '')}"
    )


def _legend(tl: Timeline) -> dict[str, Any]:
    """What the page's timeline draws, as the app's legend says it: a colour per kind (by
    kind code, as ``bars`` gives it), the kinds the run has, and its markers by flag name."""
    codes = sorted(set(tl.kind))
    flags = 0
    for f in tl.flags:
        flags |= f
    return {
        "colors": [KIND_COLORS[k] for k in KIND_NAMES],
        "kinds": [[KIND_NAMES[c], KIND_COLORS[KIND_NAMES[c]]] for c in codes],
        "marks": [
            [FLAG_NAME[bit], glyph, color, words]
            for bit, words, glyph, color in MARKS
            if flags & bit
        ],
    }


def page_data(doc: Document, timeline: Timeline | None = None) -> dict[str, Any]:
    """Everything the page shows of ``doc`` (plain JSON values)."""
    tl = timeline if timeline is not None else build_timeline(doc)
    step_of = {tl.effect_of[s]: s for s in range(len(tl)) if tl.effect_of[s] >= 0}
    rows = []
    for row in step_rows(tl):
        d = row.to_dict()
        rows.append(
            [
                d["seq"],
                d["kind"],
                d["depth"],
                d["agent"],
                d["summary"],
                d["tokens"],
                row.cost_text,
                d["flags"],
                [_decision(s) for s in d["shield"]],
            ]
        )
    h = doc.header
    return {
        "format": FORMAT,
        "legend": _legend(tl),
        "source": {"path": doc.path, "format": doc.format, "model": h.model or ""},
        "totals": {
            "steps": len(step_of),  # effects: the app's and the library's count, not rows
            "tokens_in": tl.input_tokens,
            "tokens_out": tl.output_tokens,
            "cost": tl.cost_text(),
        },
        "system": _cut(h.system or ""),
        "rows": rows,
        "bars": [[tl.tokens_in[s], tl.tokens_out[s], int(tl.kind[s])] for s in range(len(tl))],
        "details": [_detail(tl, s, step_of) for s in range(len(tl))],
    }
