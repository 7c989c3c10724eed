"""One candidate's fork, in either re-run mode; returns the branch and how it ended."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from loom_core.fork.agent_rerun import agent_rerun
from loom_core.fork.budget import SharedBudget, billed
from loom_core.fork.rerun import run_fork
from loom_core.formats.document import Document
from loom_core.heal.repairs import Candidate
from loom_core.providers.base import Provider


class AttemptLimits(Protocol):
    """The part of a heal's options one attempt obeys."""

    @property
    def mode(self) -> str: ...
    @property
    def max_turns(self) -> int: ...


class Healer(Protocol):
    """What one attempt needs of the heal that runs it (the engine's ``Healer`` is one).

    Why a protocol: the engine runs attempts, so an attempt naming the engine's class
    would make the two modules import each other."""

    @property
    def doc(self) -> Document: ...
    @property
    def path(self) -> str: ...
    @property
    def provider(self) -> Callable[[], Provider] | None: ...
    @property
    def budget(self) -> SharedBudget | None: ...
    @property
    def opts(self) -> AttemptLimits: ...


def attempt(healer: Healer, cand: Candidate) -> tuple[dict[str, Any], str]:
    if healer.opts.mode == "agent":
        return _agent(healer, cand)
    return _model(healer, cand)


def _model(healer: Healer, cand: Candidate) -> tuple[dict[str, Any], str]:
    if healer.provider is None:
        raise ValueError("the model re-run needs a provider")
    provider = healer.provider()
    try:
        result = run_fork(
            healer.doc,
            healer.path,
            cand.step,
            cand.edit,
            provider,
            out=cand.path,
            max_turns=healer.opts.max_turns,
            reason=cand.edit.reason,
            cancel=cand.cancel,
            shared_budget=healer.budget,
        )
    finally:
        getattr(provider, "close", lambda: None)()
    cand.tokens = result.input_tokens + result.output_tokens
    if result.error:
        cand.error = result.error
    return result.branch, result.status


def _agent(healer: Healer, cand: Candidate) -> tuple[dict[str, Any], str]:
    result = agent_rerun(healer.path, cand.step, cand.edit, str(cand.path), cancel=cand.cancel)
    if result.path is None:
        return {}, "cancelled" if result.cancelled else "error"
    branch = json.loads(Path(result.path).read_text(encoding="utf-8"))
    tail = branch["log"][int(branch["fork"].get("edit_seq") or 0) :]
    cand.tokens = sum(
        billed((e.get("result") or {}).get("usage") or {}) for e in tail if e.get("kind") == "model"
    )
    if healer.budget is not None:
        healer.budget.charge(cand.tokens)  # spent through the agent's own client
    status = "cancelled" if result.cancelled else "error" if result.timed_out else "done"
    return branch, status
