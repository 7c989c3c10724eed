"""Steps as the app lists them: their one number, their one-line description, their row.

A step's number is its effect's ``seq`` -- the number loom-harness prints in
brackets (``loom timeline``, ``loom watch``) and the one every ``--step``
accepts -- never its position in the step list, where user prompts are rows too
(they have no number). :func:`step_row` is the one description of a list row:
the desktop step list and ``python -m loom_core steps`` both print what it returns.

Descriptions are computed on demand from a step's payload (never stored for all
steps), with the shapes ``loom watch`` uses: a model step that calls tools is
described by its calls, anything else by its text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from loom_core.fork.edits import edit_summary
from loom_core.formats.document import text_and_calls
from loom_core.views.pricing import OFFLINE_TEXT, format_usd
from loom_core.views.timeline import (
    F_BLOCKED,
    F_DENIED,
    F_DRYRUN,
    F_ERROR,
    F_SHIELD,
    F_UNFINISHED,
    K_EPISODE,
    K_MODEL,
    PROMPT,
    Timeline,
)

SUMMARY_CHARS = 160  # a row's summary, in the step list and in ``steps``
FLAG_NAMES = (
    (F_ERROR, "error"),
    (F_BLOCKED, "blocked"),
    (F_DRYRUN, "dry-run"),
    (F_SHIELD, "shield"),
    (F_DENIED, "denied"),
    (F_UNFINISHED, "unfinished"),
)
PROMPT_LABEL = PROMPT  # what a user-prompt row is called where a step has its number


def clip(text: str, limit: int) -> str:
    """Collapse whitespace and cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


def call_text(call: dict[str, Any]) -> str:
    """``name({json args})`` as loom-harness shows a call."""
    name = call.get("name", "")  # a hand-edited name of another type shows as its JSON
    name = name if isinstance(name, str) else json.dumps(name, ensure_ascii=False)
    return f"{name}({json.dumps(call.get('input', {}), ensure_ascii=False)})"


def readable_time(value: Any) -> str | None:
    """A ``time`` effect's clock reading (seconds since the epoch, as ``time.time()`` gave
    it) as a UTC date and time; None when it is not such a number (shown raw then)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        when = datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):  # NaN, ±inf, beyond year 9999
        return None
    return when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond // 1000:03d} UTC"


def effect_text(kind: str, value: Any) -> str:
    """What an effect's result says, unclipped: a model call by the calls it made (or its
    text), a clock reading as a date, a reviewer's verdict in words, a text as it is,
    anything else as JSON. The step list, ``summary``, ``steps``, ``watch`` and the
    exported page all describe a step by this."""
    if kind == "model" and isinstance(value, dict):
        text, calls = text_and_calls(value)
        return "calls " + ", ".join(call_text(c) for c in calls) if calls else text
    if isinstance(value, str):
        return value
    if kind == "time" and (when := readable_time(value)) is not None:
        return when
    if kind == "critic" and isinstance(value, dict):
        return critic_text(value)
    return json.dumps(value, ensure_ascii=False)


def critic_text(value: dict[str, Any]) -> str:
    """A reviewer's verdict in words: ``score C (1.0): <critique>`` (a grader's own value,
    then loom's number), ``score 0.8: …``, or ``no score: …`` when none was given."""
    score, own = value.get("score"), value.get("value")
    if own is not None:
        shown = own if isinstance(own, str) else json.dumps(own, ensure_ascii=False)
        head = f"score {shown}" + (f" ({score})" if score is not None else "")
    else:
        head = "no score" if score is None else f"score {json.dumps(score)}"
    critique = value.get("critique")
    return f"{head}: {critique if isinstance(critique, str) else json.dumps(critique)}"


def step_summary(tl: Timeline, step: int, limit: int = 120) -> str:
    """What happened at ``step``, in one line."""
    doc = tl.doc
    if tl.kind[step] == K_EPISODE:
        return clip(doc.episodes[tl.episode_of[step]], limit)
    effect = tl.effect_of[step]
    value = doc.result(effect)
    if tl.kind[step] == K_MODEL and isinstance(value, dict):
        return clip(effect_text("model", value), limit)
    if tl.kind_name(step) == "edit" and not isinstance(value, str):
        return clip(edit_summary(doc, effect, value), limit)
    return clip(effect_text(tl.kind_name(step), value), limit)


# -- the one number ------------------------------------------------------------------------


def effect_seq(effects: Any, index: int) -> int:
    """The ``seq`` of effect ``index`` as loom-harness reads it (a missing one is 0), its
    log position when the file says ``null`` (a valid log has ``seq`` == position, §1.2)."""
    seq = effects[index].seq
    return index if seq is None else int(seq)


def effect_index(effects: Any, seq: int) -> int | None:
    """The log position of the effect numbered ``seq`` (None: no such step)."""
    if 0 <= seq < len(effects) and effect_seq(effects, seq) == seq:
        return seq
    return next((i for i in range(len(effects)) if effect_seq(effects, i) == seq), None)


def step_seq(tl: Timeline, step: int) -> int | None:
    """The number of list row ``step``: its effect's seq; None for a user prompt row."""
    effect = tl.effect_of[step]
    return None if effect < 0 else effect_seq(tl.doc.effects, effect)


def step_of_seq(tl: Timeline, seq: int) -> int | None:
    """The list row of step ``seq`` (None: not a step of this timeline, or not indexed yet)."""
    index = effect_index(tl.doc.effects, seq)
    return None if index is None or index >= len(tl.step_of_effect) else tl.step_of_effect[index]


def step_label(tl: Timeline, step: int) -> str:
    """``step 14``, or ``prompt`` for a row that is not an effect."""
    seq = step_seq(tl, step)
    return PROMPT_LABEL if seq is None else f"step {seq}"


# -- the row -------------------------------------------------------------------------------


DENIED_MARK, DECISION_MARK = "◆", "★"


def decision_mark(action: Any) -> str:
    """The sign of one shield decision: ◆ a denial, ★ any other (allow, confirm, …) -- the
    sign its step's row and the timeline show, so a denial has one sign everywhere."""
    return DENIED_MARK if action == "deny" else DECISION_MARK


def flag_words(flags: int) -> list[str]:
    """What a step's flags say, in words (the timeline's tooltip): a denied call is
    "denied by the shield", not a mere shield decision."""
    words = [
        text
        for bit, text in (
            (F_ERROR, "error"),
            (F_BLOCKED, "blocked"),
            (F_DENIED, "denied by the shield"),
            (F_UNFINISHED, "unfinished"),
        )
        if flags & bit
    ]
    if flags & F_SHIELD and not flags & F_DENIED:
        words.append("shield decision")
    return words


def flag_marks(flags: int) -> str:
    """The signs a row's summary starts with: ✖ error, ⊘ blocked, ◆ denied by the shield,
    ★ another shield decision, ◷ unfinished — the timeline legend's glyphs for the same
    things, so the two never disagree."""
    marks = []
    if flags & F_ERROR:
        marks.append("✖ ")
    if flags & F_BLOCKED:
        marks.append("⊘ ")
    if flags & F_DENIED:
        marks.append(DENIED_MARK + " ")
    elif flags & F_SHIELD:
        marks.append(DECISION_MARK + " ")
    if flags & F_UNFINISHED:
        marks.append("◷ ")
    return "".join(marks)


@dataclass(frozen=True, slots=True)
class StepRow:
    """One row of the step list. ``cost`` is NaN for an unpriced model call; ``shield``
    holds the shield events placed on the step (their index in ``shield_events``, event)."""

    row: int
    seq: int | None
    kind: str
    depth: int
    agent: str
    summary: str
    tokens: int
    cost: float
    flags: int
    shield: tuple[tuple[int, Any], ...]
    offline: bool = False  # answered offline (scripted): free, and said so

    @property
    def cost_text(self) -> str:
        """The cost as every face shows it (:func:`loom_core.views.pricing.format_usd`)."""
        return OFFLINE_TEXT if self.offline else format_usd(self.cost)

    @property
    def flag_names(self) -> list[str]:
        return [name for bit, name in FLAG_NAMES if self.flags & bit]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (an unpriced cost is ``null``; shield events as recorded)."""
        return {
            "row": self.row,
            "seq": self.seq,
            "kind": self.kind,
            "depth": self.depth,
            "agent": self.agent,
            "summary": self.summary,
            "tokens": self.tokens,
            "cost": None if math.isnan(self.cost) else self.cost,
            **({"offline": True} if self.offline else {}),
            "flags": self.flag_names,
            "shield": [{"index": i, **_event_dict(e)} for i, e in self.shield],
        }


def _event_dict(event: Any) -> dict[str, Any]:
    dump = getattr(event, "model_dump", None)
    return dump(mode="json") if dump is not None else dict(event)


def step_row(
    tl: Timeline, step: int, limit: int = SUMMARY_CHARS, summary: str | None = None
) -> StepRow:
    """List row ``step`` (``summary``: an already computed ``step_summary`` of it)."""
    events = tl.doc.header.shield_events or []
    placed = tuple((i, events[i]) for i in tl.shield_at.get(step, ()) if 0 <= i < len(events))
    return StepRow(
        step,
        step_seq(tl, step),
        tl.kind_name(step),
        tl.depth[step],
        tl.agents[tl.agent[step]],
        step_summary(tl, step, limit) if summary is None else summary,
        tl.tokens_in[step] + tl.tokens_out[step],
        tl.cost[step],
        tl.flags[step],
        placed,
        step < len(tl.offline) and bool(tl.offline[step]),
    )


def step_rows(tl: Timeline, limit: int = SUMMARY_CHARS) -> Iterator[StepRow]:
    """Every row of the step list, in order."""
    return (step_row(tl, s, limit) for s in range(len(tl)))
