"""What the library keeps of a loaded run: its facts for the Runs page and its steps' text.

Why a light pass of its own and not the timeline: the timeline rebuilds every context
frame (ten times the cost of loading), and the library needs none of it. Tokens and cost
come from :mod:`loom_core.views.summary` (the numbers ``summary --json`` prints); error
and blocked marks from :func:`loom_core.views.timeline.result_flags`, as the step filter
reads them. A model step's text holds its calls as ``name({args})``, so a search for a
tool argument finds the step that made the call, and ``tool:NAME`` matches it too.

Each step becomes one row of the full-text index: ``body`` (message text, calls with
their arguments, results, errors), ``tool`` (tool names), ``agent`` and ``tags`` (kind and
flag words, see :func:`tag_words`), capped at :data:`BODY_CHARS` characters of text.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from loom_core.formats.document import Document, text_and_calls
from loom_core.library.ending import file_facts, fork_of
from loom_core.live.outcome import Facts
from loom_core.views.shield_place import executed_input, place_shield_events
from loom_core.views.steps import effect_seq
from loom_core.views.summary import usage_and_cost
from loom_core.views.timeline import F_BLOCKED, F_ERROR, KINDS, kind_code, result_flags

BODY_CHARS = 32_000  # text indexed per step: a huge tool result is searchable by its start
TITLE_CHARS = 200


@dataclass
class StepText:
    """One row of the full-text index (``seq`` None: a user prompt, which has no number;
    ``sample``: ``ID:EPOCH`` of the Inspect sample it is in, "" in a file of one run)."""

    seq: int | None
    body: str
    tool: str = ""
    agent: str = ""
    tags: str = ""
    sample: str = ""


@dataclass
class RunFacts:
    """A run as the Runs page lists it."""

    format: str
    title: str = ""
    models: list[str] = field(default_factory=list)
    steps: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = 0.0
    errors: int = 0
    ending: Facts = field(default_factory=Facts)  # how it ended, as its file says
    proxy: bool = False  # recorded by a proxy (its writer is looked for beside it)
    started: float | None = None
    parent: str | None = None
    fork_seq: int | None = None
    healed_by: str | None = None


def tag_words(kind: int, flags: int, depth: int) -> str:
    """Words the ``tags`` column holds: ``kmodel`` … for the kind, ``ferror`` (an error,
    a blocked or denied call), ``fblocked`` and ``fsubagent`` for the flags (shield
    decisions add ``fshield`` and ``fdenied``, see :func:`_add_shield`)."""
    words = [f"k{KINDS[kind]}"]
    if flags & (F_ERROR | F_BLOCKED):
        words.append("ferror")
    if flags & F_BLOCKED:
        words.append("fblocked")
    if depth:
        words.append("fsubagent")
    return " ".join(words)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _agent(meta: Any) -> str:
    return str(meta.agent or meta.sys_role or "main") if meta is not None else "main"


def _model_body(value: Any) -> tuple[str, list[str]]:
    text, calls = text_and_calls(value)
    names = [_text(c.get("name", "")) for c in calls]
    parts = [text] + [
        f"{n}({_text(c.get('input', {}))})" for n, c in zip(names, calls, strict=True)
    ]
    return "\n".join(p for p in parts if p), names


def step_texts(doc: Document) -> list[StepText]:
    """Every step's indexed text: user prompts first, then each effect in log order.

    A model step whose call was blocked carries the call's flags too (the step filter's
    ``is:error`` / ``is:blocked`` show both); calls pair with results in order per depth.
    """
    rows = [StepText(None, e[:BODY_CHARS], agent="user", tags="kepisode") for e in doc.episodes]
    waiting: dict[int, deque[tuple[str, int]]] = {}  # depth -> (tool name, model row) queue
    for i, eff in enumerate(doc.effects):
        kind = eff.kind if isinstance(eff.kind, str) else ""
        code = kind_code(kind)
        depth = eff.depth if isinstance(eff.depth, int) else 0
        flags = result_flags(eff.result) if kind.startswith("tool:") else 0
        row = StepText(effect_seq(doc.effects, i), "", agent=_agent(eff.meta))
        if kind == "model":
            row.body, names = _model_body(doc.result(i))
            row.tool = " ".join(names)
            waiting.setdefault(depth, deque()).extend((n, len(rows)) for n in names)
        else:
            value = doc.result(i)
            row.body = _text(value) if value is not None else ""
            if kind.startswith("tool:"):
                row.tool = kind[5:]
                caller = _pop_call(waiting.get(depth), kind[5:])
                if caller is not None and flags & (F_ERROR | F_BLOCKED):
                    rows[caller].tags = _more_tags(rows[caller].tags, flags)
        row.body = row.body[:BODY_CHARS]
        row.tags = " ".join(filter(None, [tag_words(code, flags, depth), row.tags]))
        rows.append(row)
    _add_shield(doc, rows, first=len(doc.episodes))
    return rows


@dataclass
class _EffectSteps:
    """The effects as steps, for :func:`place_shield_events` (no user-prompt rows)."""

    doc: Document
    effect_of: range

    def __len__(self) -> int:
        return len(self.effect_of)


def _add_shield(doc: Document, rows: list[StepText], first: int) -> None:
    """Put each shield decision on its model step (as the timeline places it): the call's
    tool and arguments join the step's text, ``fshield`` its tags, and a denied call
    ``fdenied`` (which ``is:blocked`` and ``is:error`` include, as in the step filter)."""
    if not doc.shield_events:
        return
    steps = _EffectSteps(doc, range(len(doc.effects)))
    models = [i for i, e in enumerate(doc.effects) if e.kind == "model"]
    for effect, events in place_shield_events(doc, steps, models).items():
        row = rows[first + effect]
        words = dict.fromkeys(row.tags.split() + ["fshield"])
        for event in (doc.shield_events[i] for i in events):
            if event.action == "deny":
                words.update(dict.fromkeys(["fdenied", "fblocked", "ferror"]))
            if event.tool:
                row.tool = " ".join(dict.fromkeys([*row.tool.split(), str(event.tool)]))
                call = f"{event.tool}({_text(executed_input(event))})"
                row.body = row.body if call in row.body else f"{row.body}\n{call}"[:BODY_CHARS]
        row.tags = " ".join(words)


def _more_tags(tags: str, flags: int) -> str:
    """A model step's tags plus the error/blocked words of a call it made."""
    words = dict.fromkeys(tags.split())
    words["ferror"] = None
    if flags & F_BLOCKED:
        words["fblocked"] = None
    return " ".join(words)


def _pop_call(queue: deque[tuple[str, int]] | None, name: str) -> int | None:
    """The row of the oldest waiting call of tool ``name`` (removed from the queue)."""
    if not queue:
        return None
    for k, (tool, row) in enumerate(queue):
        if tool == name:
            del queue[k]
            return row
    return None


def _timestamp(value: Any) -> float | None:
    """Unix seconds of an ISO 8601 time or of a number of seconds (None: neither)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) if 0 < value < 1e11 else None  # (seconds, not ms or ns)
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _models(doc: Document) -> list[str]:
    seen: dict[str, None] = {}
    if doc.header.model:
        seen[_text(doc.header.model)] = None
    for eff in doc.effects:
        model = eff.meta.model if eff.meta is not None else None
        if isinstance(model, str) and model:
            seen[model] = None
    return list(seen)


def run_facts(doc: Document, rows: list[StepText]) -> RunFacts:
    """The Runs page's facts about ``doc`` (``rows`` from :func:`step_texts`)."""
    tokens_in, tokens_out, cost = usage_and_cost(doc)
    fork = fork_of(doc)
    parent = fork.get("parent")
    parent_path = parent.get("path") if isinstance(parent, dict) else None
    workspace = doc.header.workspace
    step = fork.get("step")
    healed = doc.header.healed_by
    return RunFacts(
        format=doc.format,
        title=" ".join((doc.episodes[0] if doc.episodes else "").split())[:TITLE_CHARS],
        models=_models(doc),
        steps=len(doc.effects),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost=cost,
        errors=sum(1 for r in rows if r.seq is not None and "ferror" in r.tags.split()),
        ending=file_facts(doc),
        proxy=doc.is_proxy,
        started=_timestamp(fork.get("created_at"))
        or _timestamp(workspace.recorded_at if workspace is not None else None)
        or _timestamp(doc.extra.get("started")),  # a foreign run: when its source says
        parent=parent_path if isinstance(parent_path, str) else None,
        fork_seq=step if isinstance(step, int) and not isinstance(step, bool) else None,
        healed_by=healed if isinstance(healed, str) and healed else None,
    )
