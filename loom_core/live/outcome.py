"""How a run ended, from its facts: the one answer the Runs page, ``runs list``, the live
tab and ``watch`` all give.

Why one function of facts: the Runs page and the live tab of the same run used to
disagree (a demo whose deploy was denied listed as failed while its tab said finished; a
journal whose writer died mid-tool listed as running forever), because each guessed from
what it had at hand. Each caller now only gathers facts -- what the file says
(:class:`Facts`) and whether anyone still writes it -- and :func:`outcome` decides.

The outcomes, in the order they are decided:

* ``failed`` -- an error ended the run: its agent crashed (its owner says so: the
  app that started it saw it exit with an error), the harness refused the model's
  output (``stop_reason`` ``invalid_output``), a fork ended in an error or a timeout,
  the producer recorded an error as the run's end.
* ``waiting on a human`` -- paused on a question (a trailing ``human`` intent, or a
  trace saved while paused).
* ``running`` -- someone is known to write it still (its owner says so, or a process
  holds it open): a proxy's recording whose agent answered may get its next request.
* ``stopped without finishing`` -- nothing more will be written and the run did not
  reach its end: its writer died inside a tool (a trailing ``tool:`` intent), a proxy
  was stopped mid-run, a step or token budget stopped it, or its writer is gone with
  the last model call still asking for a tool. A trailing tool intent also counts once
  the file has been idle ``idle_after`` seconds where the writer cannot be seen.
* ``finished`` -- nothing is unfinished, the last top-level model call answered instead
  of asking for a tool, and every episode (user prompt) got such an answer
  (:func:`answered_turns`). A heuristic: a structured-output retry or a critic
  rejection also ends a turn, so such runs can read as finished a step early.
* ``running`` -- everything else: not known to be over.

Whether a writer is still there is a fact about processes, not bytes; callers say what
they know: ``True`` (its owner says it records, or a process holds the file open),
``False`` (its owner stopped it, no process holds it, a finished file) or ``None``
(cannot be known here: only what is known is said, so such a run stays ``running``).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

from loom_core.formats.document import decode_raw, text_and_calls

FINISHED = "finished"
FAILED = "failed"
HUMAN = "waiting on a human"
STOPPED = "stopped without finishing"
RUNNING = "running"
OUTCOMES = (FINISHED, FAILED, HUMAN, STOPPED, RUNNING)

DEFAULT_IDLE_AFTER = 10.0
"""Seconds without a change after which a trailing tool intent counts as a crash."""


@dataclass(frozen=True)
class Facts:
    """What a run's file (and its owner) say about its end.

    ``written``: anything at all (False: an empty journal). ``answered``: see
    :func:`answered_turns`. ``unfinished``: the kind of the first intent with no effect
    (``human``, ``tool:NAME``, ``model`` …; "" none) and ``unfinished_seq`` its step.
    ``paused``: saved while paused on a human. ``error``: the error that ended it, in
    words. ``limit``: the limit that stopped it without an error (``max_steps``,
    ``budget``).
    """

    written: bool = True
    answered: bool = False
    unfinished: str = ""
    unfinished_seq: int | None = None
    paused: bool = False
    error: str = ""
    limit: str = ""

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def of_json(cls, value: Any) -> Facts:
        """The facts :meth:`as_json` stored (anything else reads as no facts)."""
        if not isinstance(value, dict):
            return cls(written=False)
        known = {k: v for k, v in value.items() if k in cls.__dataclass_fields__}
        try:
            return cls(**known)
        except TypeError:
            return cls(written=False)


@dataclass(frozen=True)
class Outcome:
    """The outcome (one of :data:`OUTCOMES`) and why, when that is not obvious."""

    status: str
    why: str = ""


def outcome(
    facts: Facts,
    writer: bool | None,
    idle: float = 0.0,
    idle_after: float = DEFAULT_IDLE_AFTER,
    writer_why: str = "",
) -> Outcome:
    """The run's outcome (see the module docstring for the rules).

    ``writer``: whether anyone still writes the run (True / False / None unknown);
    ``writer_why``: how a gone writer is known, said with a stopped run; ``idle``:
    seconds since the file last changed.
    """
    if facts.error:
        return Outcome(FAILED, facts.error)
    if facts.paused or facts.unfinished == "human":
        return Outcome(HUMAN)
    if writer is True:
        return Outcome(RUNNING)
    gone = writer is False
    if facts.unfinished.startswith("tool:"):
        if gone or (writer is None and idle >= idle_after):
            step = f" (step {facts.unfinished_seq})" if facts.unfinished_seq is not None else ""
            return Outcome(STOPPED, _join(f"crashed inside {facts.unfinished}{step}", writer_why))
        return Outcome(RUNNING)
    if facts.unfinished:
        why = _join(f"{facts.unfinished} never finished", writer_why)
        return Outcome(STOPPED, why) if gone else Outcome(RUNNING)
    if facts.answered:
        return Outcome(FINISHED)
    if facts.limit:
        return Outcome(STOPPED, f"stopped by its {facts.limit} limit")
    if gone:
        said = "nothing was written" if not facts.written else ""
        return Outcome(STOPPED, _join(said, writer_why))
    return Outcome(RUNNING)


def _join(what: str, how: str) -> str:
    return "; ".join(part for part in (what, how) if part)


# -- answered turns --------------------------------------------------------------------


class _Answers:
    """Depth-0 model effects scanned so far: how many ended their turn, and the last one."""

    __slots__ = ("scanned", "ended", "last_ended")

    def __init__(self) -> None:
        self.scanned = 0
        self.ended = 0
        self.last_ended: bool | None = None


# Why a memo: the tailer asks after every read; rescanning 100,000 effects each time
# would make following a long run quadratic. Keyed by the owner's identity with a weak
# reference (a JournalState is unhashable), so a reset state (a new object) starts over
# and a dropped one is forgotten.
_memo: dict[int, tuple[weakref.ref[Any], _Answers]] = {}
_memo_lock = threading.Lock()


def _memo_for(owner: Any) -> _Answers:
    key, size = id(owner), len(owner.effects)
    entry = _memo.get(key)
    if entry is None or entry[0]() is not owner or entry[1].scanned > size:
        ref = weakref.ref(owner, lambda _ref: _memo.pop(key, None))  # atomic: no lock needed
        entry = _memo[key] = (ref, _Answers())
    return entry[1]


def _ends_turn(effect: Any) -> bool:
    """A model effect without tool calls: the agent answered instead of acting."""
    return not text_and_calls(decode_raw(effect.result))[1]


def answered_turns(owner: Any) -> tuple[int, bool | None]:
    """(depth-0 model effects that ended their turn, whether the last one did; None:
    none yet) of ``owner.effects`` (a journal's state or a document: anything with an
    ``effects`` list that only grows)."""
    with _memo_lock:
        memo = _memo_for(owner)
        effects = owner.effects
        for i in range(memo.scanned, len(effects)):
            eff = effects[i]
            if eff.kind == "model" and not eff.depth:
                memo.last_ended = _ends_turn(eff)
                memo.ended += memo.last_ended
        memo.scanned = len(effects)
        return memo.ended, memo.last_ended


def answered(owner: Any, episodes: int) -> bool:
    """Every episode answered: the last depth-0 model effect ended its turn, and at least
    as many did as there are ``episodes``."""
    ended, last_ended = answered_turns(owner)
    return bool(last_ended) and ended >= max(episodes, 1)
