"""Scorers in an Inspect AI sample: a grader's model call is the scorer's, not the agent's.

Facts relied on (inspect-ai's source, ``scorer/_model.py``, ``event/_score.py``,
``log/_transcript.py``): a task's scorers run after its solvers, each inside a span of type
``scorer`` named after it, all inside one of type ``scorers`` (0.3.5x onwards); older logs
(0.3.4x) mark them with ``step`` events instead (``action`` begin/end, ``type: scorer``,
``name``). A model-graded scorer (``model_graded_fact``, ``model_graded_qa``, or any scorer
that calls ``get_model().generate``) writes an ordinary ``model`` event there -- inspect's
``stats.model_usage`` counts it with the agent's calls -- then a ``score`` event (``score:
{value, answer, explanation}``; ``intermediate`` when a solver scored mid-run).

How a run shows it: each grading call is a loom ``critic`` step (loom's record of a
reviewer scoring an answer, loom-format.md §1.3) at depth 0, named after its scorer, with
the call's usage in ``meta.usage`` (counted and priced like any call:
:mod:`loom_core.views.billed`), its text as the critique, and its scorer's verdict as the
score once the ``score`` event says it. So the grader's verdict is never the run's output,
nor a turn of the agent a fork could start from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from loom_core.formats.foreign import RunBuilder

_SCORER_SPANS = ("scorer", "scorers")
# inspect's default value_to_float (scorer/_metric.py): its sentinels (as written), then
# the boolean words (any case)
_SENTINELS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


@dataclass
class Scoring:
    """Which events are a scorer's, and the grading steps still waiting for their score."""

    steps: list[str] = field(default_factory=list)  # open ``step`` scorers (older logs)
    waiting: dict[str, int] = field(default_factory=dict)  # scorer -> its last critic's seq

    def step_event(self, action: Any, kind: Any, name: Any) -> None:
        """An old ``step`` event: a scorer begins or ends."""
        if kind != "scorer":
            return
        if action == "begin":
            self.steps.append(name if isinstance(name, str) else "scorer")
        elif action == "end" and self.steps:
            self.steps.pop()


def scorer_of(scoring: Scoring, spans: dict[str, tuple[Any, Any, Any]], span: Any) -> str | None:
    """The name of the scorer an event inside span ``span`` belongs to, or None (the agent's)."""
    seen = 0
    while span in spans and seen < 10_000:
        parent, kind, name = spans[span]
        if kind in _SCORER_SPANS:
            return name if isinstance(name, str) and name else str(kind)
        span, seen = parent, seen + 1
    return scoring.steps[-1] if scoring.steps else None


def add_grading(
    run: RunBuilder, scoring: Scoring, scorer: str, text: str, usage: dict[str, Any], model: Any
) -> int:
    """A scorer's model call as a ``critic`` step; its score comes with :func:`take_score`."""
    meta = {"agent": scorer, **({"model": model} if isinstance(model, str) and model else {})}
    seq = run.add_call_step(
        "critic",
        {"scorer": scorer, "n": len(run.log)},
        {"score": None, "critique": text},
        usage,
        meta=meta,
    )
    scoring.waiting[scorer] = seq
    return seq


def take_score(run: RunBuilder, scoring: Scoring, scorer: str | None, score: Any) -> None:
    """A ``score`` event: its scorer's last grading step gets the verdict (a scorer that
    called no model has no step: its score is in the sample list, as before)."""
    seq = scoring.waiting.pop(scorer, None) if scorer is not None else None
    if seq is None or not isinstance(score, dict):
        return
    value = score.get("value")
    result = run.log[seq]["result"]
    result["score"] = as_float(value)
    if result["score"] != value:
        result["value"] = value  # the scorer's own word for it ("C"), beside loom's number


def as_float(value: Any) -> float | None:
    """A score value as inspect's default ``value_to_float`` reads it; None where it would
    warn and say 0 (a list, a dict, a word it does not know): no number beats a wrong one."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        word = value.lower()
        if value in _SENTINELS or word in _WORDS:
            return _SENTINELS.get(value, _WORDS.get(word))
        try:
            number = float(word)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None
