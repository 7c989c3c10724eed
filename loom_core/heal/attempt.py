"""One candidate's fork, in either re-run mode; returns the branch and how it ended."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom_core.fork.agent_rerun import agent_rerun
from loom_core.fork.budget import billed
from loom_core.fork.rerun import run_fork

if TYPE_CHECKING:
    from loom_core.heal.engine import Healer
    from loom_core.heal.repairs import Candidate


def attempt(healer: "Healer", cand: "Candidate") -> tuple[dict[str, Any], str]:
    if healer.opts.mode == "agent":
        return _agent(healer, cand)
    return _model(healer, cand)


def _model(healer: "Healer", cand: "Candidate") -> tuple[dict[str, Any], str]:
    if healer.provider is None:
        raise ValueError("the model re-run needs a provider")
    provider = healer.provider()
    try:
        result = run_fork(healer.doc, healer.path, cand.step, cand.edit, provider,
                          out=cand.path, max_turns=healer.opts.max_turns,
                          reason=cand.edit.reason, cancel=cand.cancel,
                          shared_budget=healer.budget)
    finally:
        getattr(provider, "close", lambda: None)()
    cand.tokens = result.input_tokens + result.output_tokens
    if result.error:
        cand.error = result.error
    return result.branch, result.status


def _agent(healer: "Healer", cand: "Candidate") -> tuple[dict[str, Any], str]:
    result = agent_rerun(healer.path, cand.step, cand.edit, str(cand.path), cancel=cand.cancel)
    if result.path is None:
        return {}, "cancelled" if result.cancelled else "error"
    branch = json.loads(Path(result.path).read_text(encoding="utf-8"))
    tail = branch["log"][int(branch["fork"].get("edit_seq") or 0):]
    cand.tokens = sum(billed((e.get("result") or {}).get("usage") or {})
                      for e in tail if e.get("kind") == "model")
    if healer.budget is not None:
        healer.budget.charge(cand.tokens)  # spent through the agent's own client
    status = "cancelled" if result.cancelled else "error" if result.timed_out else "done"
    return branch, status

