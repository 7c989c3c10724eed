"""Place shield decisions at the step where they happened (loom-format.md §1.6, §7.8).

``shield_events`` carry no step index. A denied call left a notice naming the
call in the screened response's text; an approved call is still among the
response's tool calls -- with the operator's arguments when they were edited
(our additive ``edited_input`` key), which is what the response carries. So each
event goes to the first model step, at or after the previous event's step, that
shows it and whose showing was not already taken by an earlier event: a call the
model made twice (in one response or in two) places two decisions on the steps
where each was made. Events that name no call (taint), or whose call no step
shows, stay at the previous event's step, or the first model step.

:class:`Placer` keeps what it read of each step, so a live tab can place again as
its timeline grows (:mod:`loom_desktop.document.live_shield`) and end where opening the
finished trace does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from loom_core.formats.canonical import call_signature as signature
from loom_core.formats.document import Document, text_and_calls

NOTICE_HEAD = "Blocked tool call "


class Steps(Protocol):
    """What placement reads of a timeline (:class:`loom_core.views.timeline.Timeline`):
    its document and which effect each step shows. A protocol, so the timeline can call
    placement without the two modules importing each other."""

    @property
    def doc(self) -> Document: ...

    @property
    def effect_of(self) -> Sequence[int]: ...

    def __len__(self) -> int: ...


def _extra(event: Any) -> dict[str, Any]:
    extra = getattr(event, "model_extra", None)
    return extra if isinstance(extra, dict) else {}


def edited_input(event: Any) -> tuple[bool, Any]:
    """(whether the operator edited the call, the arguments that ran)."""
    extra = _extra(event)
    return ("edited_input" in extra, extra.get("edited_input"))


def executed_input(event: Any) -> Any:
    """The arguments the call ran with: the operator's edit, or the model's own."""
    edited, value = edited_input(event)
    return value if edited else event.input


class Placer:
    """Places ``shield_events`` over the model steps of one timeline."""

    def __init__(self, tl: Steps) -> None:
        self.tl = tl
        self._read: dict[int, tuple[str, list[dict[str, Any]]]] = {}

    def _shown(self, step: int) -> tuple[str, list[dict[str, Any]]]:
        if step not in self._read:  # a model step's result never changes once indexed
            self._read[step] = text_and_calls(self.tl.doc.result(self.tl.effect_of[step]))
        return self._read[step]

    def count(self, step: int, event: Any) -> int:
        """How many times ``step``'s response shows ``event``'s call."""
        text, calls = self._shown(step)
        if event.action == "deny":
            return text.count(NOTICE_HEAD + signature(event.tool, event.input))
        ran = executed_input(event)
        return sum(1 for c in calls if c.get("name") == event.tool and c.get("input") == ran)

    def place(self, events: list[Any], model_steps: list[int]) -> list[int | None]:
        """Each event's index into ``model_steps`` (None: there are no model steps)."""
        out: list[int | None] = []
        cursor = 0
        taken: Counter[tuple[int, str]] = Counter()  # (model step index, claim) -> times
        for event in events:
            where = None
            if event.tool:
                claim = _claim(event)
                where = next(
                    (
                        k
                        for k in range(cursor, len(model_steps))
                        if taken[(k, claim)] < self.count(model_steps[k], event)
                    ),
                    None,
                )
                if where is not None:
                    taken[(where, claim)] += 1
                    cursor = where
            out.append((where if where is not None else cursor) if model_steps else None)
        return out


def _claim(event: Any) -> str:
    """What an event takes from a step: its notice, or its call as it ran."""
    if event.action == "deny":
        return "deny " + signature(event.tool, event.input)
    return "call " + signature(event.tool, executed_input(event))


def place_shield_events(doc: Any, tl: Steps, model_steps: list[int]) -> dict[int, list[int]]:
    """Map step -> indices into ``doc.shield_events``; the timeline names its model steps."""
    events = doc.shield_events
    if not events:
        return {}
    placed: dict[int, list[int]] = {}
    for idx, where in enumerate(Placer(tl).place(events, model_steps)):
        if where is not None:
            placed.setdefault(model_steps[where], []).append(idx)
        elif len(tl):
            placed.setdefault(len(tl) - 1, []).append(idx)
    return placed
