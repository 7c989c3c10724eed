"""What a journal being written says about its run right now: one word for a status line.

Why a pure function: the tailer, the ``watch`` CLI and the desktop's live tab must
agree on the status -- with each other and with the Runs page -- and a function of
(journal state, seconds since the file last changed, what is known of its writer) can
be unit tested without files, threads or clocks. The run's outcome is decided by
:func:`loom_core.live.outcome.outcome`, the one function the run library uses too;
this adds only what a file being followed has besides an outcome:

* ``rewritten`` -- transient: the update that reset the state (the file was
  truncated and rewritten, or deleted and re-created) says so once.
* ``waiting`` -- no file yet (``state is None``) or nothing in it yet, while a writer
  may still come (once it is known gone: ``stopped without finishing``).

Then the outcomes (see :mod:`loom_core.live.outcome`): ``failed`` (its owner said an
error ended it), ``waiting on a human``, ``stopped without finishing`` (the writer is
gone -- its owner said so, or no process holds the file open, see
:mod:`loom_core.live.writers` -- or it died inside a tool), ``finished`` and ``running``.
"""

from __future__ import annotations

from loom_core.formats.journal import JournalState
from loom_core.live.outcome import (
    DEFAULT_IDLE_AFTER,
    FAILED,
    FINISHED,
    HUMAN,
    RUNNING,
    STOPPED,
    Facts,
    answered,
    outcome,
)

__all__ = [
    "DEFAULT_IDLE_AFTER",
    "ENDED",
    "FAILED",
    "FINISHED",
    "HUMAN",
    "NO_FILE_YET",
    "NO_STEP_YET",
    "REWRITTEN",
    "RUNNING",
    "STATUSES",
    "STOPPED",
    "WAITING",
    "journal_facts",
    "live_status",
]

WAITING = "waiting"
REWRITTEN = "rewritten"
NO_FILE_YET = "for the file to be created"  # what a "waiting" run waits for
NO_STEP_YET = "for the first step to be written"
STATUSES = (WAITING, RUNNING, HUMAN, FINISHED, FAILED, REWRITTEN, STOPPED)
ENDED = (FINISHED, FAILED, STOPPED)  # nothing more will be written


def _episodes(state: JournalState) -> int:
    episodes = (state.header or {}).get("episodes")
    return len(episodes) if isinstance(episodes, list) else 1


def journal_facts(state: JournalState, error: str = "") -> Facts:
    """What a journal's lines say about its run's end (``error``: its owner's word)."""
    unfinished = state.unfinished()
    first = next((u for u in unfinished if u.kind == "human"), None) or next(iter(unfinished), None)
    return Facts(
        written=state.header is not None or bool(state.effects) or bool(state.pending),
        answered=not unfinished and answered(state, _episodes(state)),
        unfinished=first.kind if first is not None else "",
        unfinished_seq=first.seq if first is not None else None,
        error=error,
    )


def live_status(
    state: JournalState | None, seconds_since_change: float, idle_after: float = DEFAULT_IDLE_AFTER
) -> str:
    """The run's status, one of :data:`STATUSES`, while its writer may still be there
    (see the module docstring; :func:`live_outcome` says more, and why)."""
    return live_outcome(state, seconds_since_change, idle_after)[0]


def live_outcome(
    state: JournalState | None,
    seconds_since_change: float,
    idle_after: float = DEFAULT_IDLE_AFTER,
    *,
    rewritten: bool = False,
    writer: bool | None = None,
    error: str = "",
    writer_why: str = "",
) -> tuple[str, str]:
    """The run's status and why (a crash's tool and step, how a gone writer is known:
    ``writer_why``; "" when there is no more to say). ``rewritten``: this update reset the
    state; ``writer``: a process still writes it (True), none does (False), unknown (None);
    ``error``: its owner said an error ended the run (the agent crashed)."""
    if rewritten:
        return REWRITTEN, ""
    facts = journal_facts(state, error) if state is not None else Facts(written=False)
    if not facts.written and not error:
        gone = writer is False
        return (STOPPED, writer_why or "nothing was written") if gone else (WAITING, "")
    decided = outcome(facts, writer, seconds_since_change, idle_after, writer_why)
    return decided.status, decided.why
