"""What a journal being written says about its run right now: one word for a status line.

Why a pure function: the tailer, the ``watch`` CLI and the desktop's live tab must
agree on the status, and a function of (journal state, seconds since the file last
changed) can be unit tested without files, threads or clocks.

The statuses, in the order they are decided:

* ``rewritten`` -- transient: the update that reset the state (the file was
  truncated and rewritten, or deleted and re-created) says so once.
* ``waiting`` -- no file yet (``state is None``) or nothing in it yet.
* ``waiting on a human`` -- an unfinished ``human`` intent: a pause on ``ask_human``
  (loom-harness leaves a trailing human intent) or a handler still waiting for input.
* ``crashed mid-tool`` -- an unfinished ``tool:`` intent and nothing changed for
  ``idle_after`` seconds (a tool that is merely slow reads as ``running`` until then).
* ``stopped without finishing`` -- the writer is gone (``writer_gone``: its owner
  said so, or no process holds the file open; see :mod:`loom_core.live.writers`) and the
  run is neither finished, nor paused on a human, nor crashed mid-tool (a trailing
  tool intent of a gone writer is a crash at once). Only what is known is said: where
  the writer cannot be seen, the run stays ``running``.
* ``finished`` -- no unfinished intent, the last depth-0 ``model`` effect ended its
  turn (no tool calls) and every episode of the header was answered, counted as
  "at least as many depth-0 model effects without tool calls as episodes". This is a
  heuristic: a structured-output retry or a critic rejection also ends a turn, so such
  runs can read as finished a step early; a run stopped by ``max_steps`` or a token
  budget (its last model call asked for tools) stays ``running``.
* ``running`` -- everything else (including an unfinished ``model`` intent).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from loom_core.formats.document import decode_raw, text_and_calls
from loom_core.formats.journal import JournalState

WAITING = "waiting"
RUNNING = "running"
HUMAN = "waiting on a human"
CRASHED = "crashed mid-tool"
FINISHED = "finished"
REWRITTEN = "rewritten"
STOPPED = "stopped without finishing"
STATUSES = (WAITING, RUNNING, HUMAN, CRASHED, FINISHED, REWRITTEN, STOPPED)
ENDED = (FINISHED, CRASHED, STOPPED)  # nothing more will be written

DEFAULT_IDLE_AFTER = 10.0
"""Seconds without a change after which a trailing tool intent counts as a crash."""


class _Answers:
    """Depth-0 model effects scanned so far: how many ended their turn, and the last one."""

    __slots__ = ("scanned", "ended", "last_ended")

    def __init__(self) -> None:
        self.scanned = 0
        self.ended = 0
        self.last_ended: bool | None = None


# Why a memo: the tailer asks for the status after every read; rescanning 100,000
# effects each time would make following a long run quadratic. Keyed by the state's
# identity with a weak reference (a JournalState is unhashable), so a reset state (a
# new object) starts over and a dropped one is forgotten.
_memo: dict[int, tuple[weakref.ref[JournalState], _Answers]] = {}
_memo_lock = threading.Lock()


def _memo_for(state: JournalState) -> _Answers:
    key = id(state)
    entry = _memo.get(key)
    if entry is None or entry[0]() is not state or entry[1].scanned > len(state.effects):
        ref = weakref.ref(state, lambda _ref: _memo.pop(key, None))  # atomic: no lock needed
        entry = _memo[key] = (ref, _Answers())
    return entry[1]


def _ends_turn(effect: Any) -> bool:
    """A model effect without tool calls: the agent answered instead of acting."""
    return not text_and_calls(decode_raw(effect.result))[1]


def answered_turns(state: JournalState) -> tuple[int, bool | None]:
    """(depth-0 model effects that ended their turn, whether the last one did; None: none yet)."""
    with _memo_lock:
        memo = _memo_for(state)
        effects = state.effects
        for i in range(memo.scanned, len(effects)):
            eff = effects[i]
            if eff.kind == "model" and not eff.depth:
                memo.last_ended = _ends_turn(eff)
                memo.ended += memo.last_ended
        memo.scanned = len(effects)
        return memo.ended, memo.last_ended


def _episodes(state: JournalState) -> int:
    episodes = (state.header or {}).get("episodes")
    return len(episodes) if isinstance(episodes, list) else 1


def live_status(
    state: JournalState | None,
    seconds_since_change: float,
    idle_after: float = DEFAULT_IDLE_AFTER,
    *,
    rewritten: bool = False,
    writer_gone: bool = False,
) -> str:
    """The run's status, one of :data:`STATUSES` (see the module docstring for the rules)."""
    if rewritten:
        return REWRITTEN
    running = STOPPED if writer_gone else RUNNING
    if state is None or (state.header is None and not state.effects and not state.pending):
        return STOPPED if writer_gone else WAITING
    unfinished = state.unfinished()
    if any(u.kind == "human" for u in unfinished):
        return HUMAN
    if any(u.kind.startswith("tool:") for u in unfinished):
        return CRASHED if writer_gone or seconds_since_change >= idle_after else RUNNING
    if unfinished:
        return running
    ended, last_ended = answered_turns(state)
    if last_ended and ended >= max(_episodes(state), 1):
        return FINISHED
    return running
