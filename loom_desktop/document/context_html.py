"""HTML for the context view: what the model saw at a step, and what a tool did.

The page is bounded whatever the trace size: a frame shows its new messages and
the last few before them, with a link for the rest; long texts are folded with a
link to unfold them. Links are ``loom:`` anchors the view handles itself.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from loom_core.formats.document import text_and_calls
from loom_core.views.edit_delta import NEW, EditDelta, frame_delta
from loom_core.views.frames import Frame, Message, frame_at
from loom_core.views.recorded import content_missing, new_from, recorded_messages
from loom_core.views.steps import call_text, readable_time, step_label
from loom_core.views.timeline import (
    F_BLOCKED,
    F_DENIED,
    F_DRYRUN,
    F_ERROR,
    K_EPISODE,
    K_MODEL,
    Timeline,
)
from loom_desktop.document.edit_html import (
    EDIT_BG,
    EDIT_RULE,
    edit_step_html,
    mark_tag,
    removed_html,
    was_html,
)
from loom_desktop.document.shield_html import shield_line_html
from loom_desktop.style import ERROR_COLOR, KIND_COLORS, NEW_BG, NEW_RULE, SHIELD_COLOR

ROLE_RULE = {"user": "#7e57c2", "assistant": "#1e88e5", "tool": "#43a047"}

FOLD = 1500
OLD_FOLD = 300  # messages the model had already seen are folded sooner: the delta matters
CONTEXT_TAIL = 6  # old messages shown before the new ones
MAX_NEW = 40

CSS = f"""
body {{ font-family: sans-serif; font-size: 10pt; }}
.hdr {{ color: #555; }}
.sec {{ font-weight: bold; margin-top: 8px; color: #333; }}
.role {{ font-weight: bold; }}
.tag {{ color: #f57f17; font-weight: bold; }}
.err {{ color: {ERROR_COLOR}; font-weight: bold; }}
.shield {{ color: {SHIELD_COLOR}; font-weight: bold; }}
.edited {{ background: {EDIT_BG}; color: {EDIT_RULE}; }}
pre {{ white-space: pre-wrap; margin: 2px 0; font-family: monospace; }}
"""


@dataclass
class ViewState:
    """What the user unfolded; reset when the step changes."""

    system_open: bool = False
    show_all: bool = False
    expanded: set[str] = field(default_factory=set)
    highlight: int | None = None  # the effect whose message the doctor panel points at
    highlight_episode: int | None = None  # ... or the user episode


HIGHLIGHT_BG, HIGHLIGHT_RULE = "#ffe3e0", "#d32f2f"
HIGHLIGHT_MARK = "⚑ DOCTOR FINDING"  # tests and users look for this tag


def highlighted_item(items: Any, n: int, state: ViewState) -> int | None:
    """Position of the highlighted effect (or episode) among a frame's first ``n`` items."""
    if state.highlight is None and state.highlight_episode is None:
        return None
    for k, (source, ref, _call_id, _name) in enumerate(islice(items, n)):
        if source == "episode":
            if ref == state.highlight_episode:
                return k
        elif source in ("tool", "memory", "assistant", "child") and ref == state.highlight:
            return k
    return None


WRONG_TYPE = "<span class='err'>⚠ wrong type, shown raw</span>"


def raw_text(value: Any) -> str:
    """Any decoded value as text: strings as they are, anything else as its JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return repr(value)[:FOLD]


def esc(text: Any) -> str:
    """HTML-escaped text; a value of another type (a hand-edited file) as its JSON."""
    return html.escape(raw_text(text), quote=False)


def folded(text: Any, key: str, state: ViewState, limit: int = FOLD, bg: str = "") -> str:
    """Text in a <pre> (tinted ``bg``), cut at ``limit`` characters with an unfold link."""
    text = raw_text(text)
    style = f" style='background-color:{bg}'" if bg else ""
    if len(text) <= limit or key in state.expanded:
        return f"<pre{style}>{esc(text)}</pre>"
    rest = len(text) - limit
    return (
        f"<pre{style}>{esc(text[:limit])}…</pre>"
        f"<p{style}><a href='loom:expand:{key}'>show {rest:,} more characters</a></p>"
    )


def pretty(value: Any) -> str:
    """JSON-looking strings and structures pretty-printed; other text as is."""
    try:
        if isinstance(value, str):
            stripped = value.strip()
            if stripped[:1] in "[{":
                return json.dumps(json.loads(stripped), indent=2, ensure_ascii=False)
            return value
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):  # not JSON after all, or too deep to indent
        return raw_text(value)


def _message(
    m: Message,
    k: int,
    new: bool,
    state: ViewState,
    first_new: int,
    marked: bool = False,
    mark: str = "",
    was: Message | None = None,
) -> str:
    """One message; ``mark`` (an edit's mark, see :mod:`.edit_html`) replaces the NEW tag."""
    who = (
        m.role
        + (f" · {m.name}" if m.name else "")
        + (
            f" ({m.source})"
            if m.source not in ("episode", "assistant", "tool", "edit", "recorded")
            else ""
        )
    )  # edit: any message of a snapshot
    tag = mark_tag(mark) if mark else " <span class='tag'>NEW</span>" if new else ""
    edited = bool(mark) and mark != NEW
    if marked:
        tag += f" <span style='color:{HIGHLIGHT_RULE}; font-weight:bold'>{HIGHLIGHT_MARK}</span>"
    text = pretty(m.text) if m.role == "tool" else m.text
    # Qt's rich text tints <p>/<pre> blocks but not <div>s, and tables lay out twice
    # as slowly: a message is a tinted header paragraph and tinted text blocks.
    bg = HIGHLIGHT_BG if marked else EDIT_BG if edited else NEW_BG if new else "#f7f9fa"
    body = folded(text, f"m{k}", state, FOLD if new or marked else OLD_FOLD, bg) if m.text else ""
    calls = "".join(
        f"<pre style='background-color:{bg}'>→ {esc(call_text(c))}</pre>" for c in m.tool_calls
    )
    rule = (
        HIGHLIGHT_RULE
        if marked
        else EDIT_RULE
        if edited
        else NEW_RULE
        if new
        else ROLE_RULE.get(m.role, "#90a4ae")
    )
    if was is not None:
        body = was_html(was) + body
    anchor = "<a name='new'></a>" if new and k == first_new else ""
    mark = "<a name='finding'></a>" if marked else ""  # inside the <p>: kept by Qt's toHtml
    return (
        f"{anchor}<p style='background-color:{bg}; margin-top:6px'>"
        f"{mark}<span style='color:{rule}'>▌</span><span class='role'>{esc(who)}</span>{tag}</p>"
        f"{body}{calls}"
    )


def _frame_html(frame: Frame, state: ViewState) -> list[str]:
    system, complete = frame.system()
    tools, offered = frame.tools()
    out = [
        "<div class='sec'>System prompt "
        f"<a href='loom:system'>{'hide' if state.system_open else 'show'}</a>"
        f"{'' if complete else ' (only its first 160 characters were recorded)'}</div>"
    ]
    if state.system_open:
        out.append(folded(system, "system", state))
    label = "Tools offered" if offered else "Tools (offer not recorded; seen in use)"
    out.append(f"<div class='sec'>{label}</div><div>{esc(', '.join(tools)) or '—'}</div>")
    n = len(frame)
    delta = frame_delta(frame)
    new_from, fresh, note = _news(frame, delta)
    out.append(f"<div class='sec'>Messages the model saw ({n}; {fresh} new){esc(note)}</div>")
    first = 0 if state.show_all else max(0, max(new_from, n - MAX_NEW) - CONTEXT_TAIL)
    marked = highlighted_item(frame.ctx.items, n, state)
    if first:
        out.append(
            f"<div class='hdr'>… {first:,} earlier messages <a href='loom:all'>show all</a></div>"
        )
    if marked is not None and marked < first:  # the flagged item is shown even when old
        out.append(_message(frame.message(marked), marked, False, state, new_from, True))
        out.append("<div class='hdr'>…</div>")
    removed = {} if delta is None else _removed_before(delta)
    for k in range(first, n):
        out.extend(removed.get(k, ()))
        mark = delta.marks.get(k, "") if delta is not None else ""
        out.append(
            _message(
                frame.message(k),
                k,
                k >= new_from and (delta is None or bool(mark)),
                state,
                new_from,
                k == marked,
                mark,
                None if delta is None else delta.was.get(k),
            )
        )
    out.extend(removed.get(n, ()))
    return out


def _input_html(tl: Timeline, effect: int, state: ViewState) -> list[str]:
    """What the model was sent: as its producer recorded it, else rebuilt from the effects."""
    recorded = recorded_messages(tl.doc, effect)
    if recorded is not None:
        first = new_from(tl.doc, effect, recorded)
        out = [
            f"<div class='sec'>Messages the model was sent ({len(recorded)}; "
            f"{len(recorded) - first} new) — as recorded by the producer</div>"
        ]
        out += [_message(m, k, k >= first, state, first) for k, m in enumerate(recorded)]
        return out
    if content_missing(tl.doc):
        return [
            "<div class='sec'>Messages the model saw</div><div class='hdr'>Not recorded: the "
            "producer captured no message content (in OpenTelemetry, content capture is "
            "opt-in). Tokens, timing and tool calls are shown.</div>"
        ]
    frame = frame_at(tl.context, effect) if tl.context else None
    return _frame_html(frame, state) if frame is not None else []


def _news(frame: Frame, delta: EditDelta | None) -> tuple[int, int, str]:
    """(first new message, how many are new, a note on the list) for a frame's header."""
    n = len(frame)
    if delta is None:
        note = " — context was rewritten since the previous call" if frame.rewritten else ""
        return frame.new_from, n - frame.new_from, note
    fresh = sum(1 for mark in delta.marks.values() if mark == NEW)
    first = min([*delta.marks, *(k for k, _m in delta.removed), n])
    return first, fresh, f" — a fork edit changed it: {delta.summary()}"


def _removed_before(delta: EditDelta) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for k, m in delta.removed:
        out.setdefault(k, []).append(removed_html(m))
    return out


def _response_html(tl: Timeline, effect: int, state: ViewState) -> list[str]:
    value = tl.doc.result(effect)
    out = ["<div class='sec'>Response</div>"]
    if not isinstance(value, dict):
        return out + [f"<div>{WRONG_TYPE}</div>", folded(pretty(value), "response", state)]
    text, calls = value.get("text"), value.get("tool_calls") or []
    if text:
        out.append(
            ("" if isinstance(text, str) else f"<div>text {WRONG_TYPE}</div>")
            + folded(text, "response", state)
        )
    if not isinstance(calls, list):
        out.append(f"<div>tool_calls {WRONG_TYPE}</div>" + folded(pretty(calls), "calls", state))
        calls = []
    for call in calls:
        if not isinstance(call, dict):
            out.append(f"<div>tool call {WRONG_TYPE}</div><pre>{esc(call)}</pre>")
            continue
        name = call.get("name", "")
        mark = "" if isinstance(name, str) else f" {WRONG_TYPE}"
        out.append(f"<pre>→ {esc(name)}({esc(pretty(call.get('input', {})))})</pre>{mark}")
    out.append(f"<div class='hdr'>stop_reason: {esc(value.get('stop_reason', ''))}</div>")
    return out


def _shield_html(tl: Timeline, step: int) -> list[str]:
    out = []
    for idx in tl.shield_at.get(step, ()):
        out.append(shield_line_html(tl.doc.shield_events[idx]))
    return out


def _tool_html(tl: Timeline, step: int, state: ViewState) -> list[str]:
    effect = tl.effect_of[step]
    kind = tl.kind_name(step)
    out = []
    caller = tl.call_of[step]
    if caller >= 0:
        call = _find_call(tl, caller, step)
        out.append(
            f"<div class='sec'>Call (made at <a href='loom:step:{caller}'>"
            f"{step_label(tl, caller)}</a>)</div>"
        )  # the link names the row
        if call is not None:
            out.append(
                f"<pre>{esc(call.get('name', ''))}({esc(pretty(call.get('input', {})))})</pre>"
            )
    flags = tl.flags[step]
    status = (
        "ERROR"
        if flags & F_ERROR
        else "BLOCKED"
        if flags & F_BLOCKED
        else "DRY-RUN"
        if flags & F_DRYRUN
        else ""
    )
    badge = f" <span class='err'>{status}</span>" if status else ""
    if effect == state.highlight:
        badge += (
            f"<a name='finding'></a> <span style='color:{HIGHLIGHT_RULE}; "
            f"font-weight:bold'>{HIGHLIGHT_MARK}</span>"
        )
    out.append(f"<div class='sec'>Result of {esc(kind)}{badge}</div>")
    out.append(
        folded(
            pretty(tl.doc.result(effect)),
            "result",
            state,
            bg=HIGHLIGHT_BG if effect == state.highlight else "",
        )
    )
    return out


def _find_call(tl: Timeline, model_step: int, result_step: int) -> dict[str, Any] | None:
    calls = text_and_calls(tl.doc.result(tl.effect_of[model_step]))[1]
    position = tl.call_position(result_step)
    meta = tl.context.meta_of(tl.effect_of[result_step]) if tl.context else None
    tuid = getattr(meta, "tuid", None)
    by_id = next((c for c in calls if tuid and c.get("id") == tuid), None)
    if by_id is not None:
        return by_id
    name = tl.kind_name(result_step)[5:]
    same = [c for c in calls if c.get("name") == name]
    return same[min(position, len(same) - 1)] if same else None


def _header(tl: Timeline, step: int) -> str:
    kind = tl.kind_name(step)
    color = KIND_COLORS.get(kind.split(":")[0], "#555")
    parts = [f"<b style='color:{color}'>{esc(kind)}</b>"]
    if tl.effect_of[step] >= 0:  # a prompt has no number: its kind already names it
        parts.append(step_label(tl, step))
    agent = tl.agents[tl.agent[step]]
    if agent:  # a step no agent is named for (a tool, a foreign main agent): no bare "agent"
        parts.append(f"agent {esc(agent)}")
    if tl.depth[step]:
        parts.append(f"depth {tl.depth[step]}")
    if tl.kind[step] == K_MODEL or _bills(tl, step):
        parts.append(f"{tl.tokens_in[step]:,} in / {tl.tokens_out[step]:,} out tokens")
        parts.append(tl.cost_text(step) or "$0")
    return "<div class='hdr'>" + " · ".join(parts) + "</div>"


def _bills(tl: Timeline, step: int) -> bool:
    """A step other than a model call that carries one (a compaction's, a grader's)."""
    return tl.context is not None and tl.effect_of[step] in tl.context.billed


def step_html(tl: Timeline, step: int, state: ViewState) -> str:
    """The whole context-view page for ``step``."""
    body = [_header(tl, step)]
    if tl.kind[step] == K_EPISODE:
        body += [
            "<div class='sec'>User</div>",
            folded(tl.doc.episodes[tl.episode_of[step]], "episode", state),
        ]
    elif tl.kind[step] == K_MODEL:
        body += _input_html(tl, tl.effect_of[step], state)
        body += _response_html(tl, tl.effect_of[step], state)
    elif tl.kind_name(step).startswith("tool:"):
        body += _tool_html(tl, step, state)
    elif tl.kind_name(step) == "edit":
        body += edit_step_html(tl, step)
    else:
        if _bills(tl, step) and recorded_messages(tl.doc, tl.effect_of[step]) is not None:
            body += _input_html(tl, tl.effect_of[step], state)  # the call it stands for
        value = tl.doc.result(tl.effect_of[step])
        when = readable_time(value) if tl.kind_name(step) == "time" else None
        shown = pretty(value) if when is None else f"{when}\n(recorded as {pretty(value)})"
        body += ["<div class='sec'>Result</div>", folded(shown, "result", state)]
    body += _shield_html(tl, step)
    if tl.flags[step] & F_DENIED:
        body.append(
            "<div class='hdr'>Denied calls never ran: the shield removed them from "
            "the response, so they exist only in shield_events.</div>"
        )
    return f"<html><head><style>{CSS}</style></head><body>{''.join(body)}</body></html>"
