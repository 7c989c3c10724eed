"""Run the repairs: forks that redact one suspect item each, until one passes the check.

Why concurrent but ordered: candidates are ranked cheapest first and the best
answer is the *first-ranked* branch that passes, so a later candidate that
passes early only stops the ones ranked after it; earlier ones still finish.

Why one :class:`~loom_core.fork.budget.SharedBudget` for all candidates: with
``--budget-tokens`` the candidates running at once must not each believe the whole
budget is theirs. Every model call reserves its worst case from the shared budget
before it starts (and waits, or stops its branch, when that does not fit), so the
tokens billed by all candidates together never exceed the budget. A candidate that
could not make a single call is ``skipped``, its error saying what was left and what
the call might have cost. An agent re-run
(``mode="agent"``) calls the model through the agent's own client, so its calls
cannot be reserved: its tokens are charged when it ends, and the budget only stops
later candidates from starting.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom_core.fork.budget import SharedBudget
from loom_core.fork.point import context_index, find_model_effect
from loom_core.formats.document import Document
from loom_core.formats.save import save_dict
from loom_core.heal.attempt import attempt
from loom_core.heal.checks import Check
from loom_core.heal.repairs import (
    CANCELLED,
    ERROR,
    FAILED,
    PASSED,
    PAUSED,
    QUEUED,
    RUNNING,
    SKIPPED,
    Candidate,
    plan_candidates,
)
from loom_core.providers.base import Cancelled, CancelToken, Provider
from loom_core.runs_dir import free_path

OnUpdate = Callable[[Candidate], None]
ALREADY_PASSES, HEALED, NO_WINNER, NO_REPAIRS = (
    "already_passes",
    "healed",
    "no_winner",
    "no_repairs",
)


class LinkedToken(CancelToken):
    """A candidate's own token that also reads as cancelled when the whole heal is."""

    def __init__(self, parent: CancelToken | None) -> None:
        super().__init__()
        self.parent = parent

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or (self.parent is not None and self.parent.cancelled)

    def check(self) -> None:
        if self.cancelled:
            raise Cancelled("cancelled")

    def wait(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not self.cancelled:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._event.wait(min(left, 0.05))
        return True


@dataclass
class HealOptions:
    """What bounds a heal: turns per branch, candidates, tokens, parallelism, mode."""

    max_turns: int = 20
    max_candidates: int | None = 5
    budget_tokens: int | None = None
    concurrency: int = 1
    mode: str = "model"  # "model" | "agent" (agent runs one at a time: they share a cwd)
    save_regression: str | None = None


@dataclass
class HealResult:
    status: str  # already_passes | healed | no_winner | no_repairs | cancelled
    check: str
    candidates: list[Candidate] = field(default_factory=list)
    winner: Candidate | None = None
    regression: str | None = None

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.candidates)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "check": self.check,
            "tokens": self.tokens,
            "winner": self.winner.label if self.winner else None,
            "winner_path": self.winner.path if self.winner else None,
            "regression": self.regression,
            "candidates": [c.to_dict() for c in self.candidates],
        }


def plan_repairs(
    doc: Document, path: str | Path, findings: Any, options: HealOptions | None = None
) -> list[Candidate]:
    """The candidate repairs for ``findings``, cheapest first; nothing runs.

    A plain function because planning needs no provider, check or output folder: the
    app plans on a worker before the user has chosen any of them.
    """
    opts = options or HealOptions()
    context_index(doc)  # the shared context walk, built once before any thread
    return plan_candidates(doc, str(path), findings, opts.max_turns, opts.max_candidates)


class Healer:
    """One heal of one run; :meth:`run` blocks (call it from a worker)."""

    def __init__(
        self,
        doc: Document,
        path: str | Path,
        check: Check,
        provider: Callable[[], Provider] | None,
        out_dir: str | Path,
        options: HealOptions | None = None,
        cancel: CancelToken | None = None,
        on_update: OnUpdate | None = None,
    ) -> None:
        self.doc, self.path, self.check = doc, str(path), check
        self.provider, self.out_dir = provider, Path(out_dir)
        self.opts = options or HealOptions()
        self.cancel = cancel or CancelToken()
        self.on_update = on_update or (lambda _c: None)
        self.lock = threading.Lock()
        total = self.opts.budget_tokens
        self.budget = None if total is None else SharedBudget(total)
        self.best: int | None = None  # rank of the best passing candidate so far
        self.candidates: list[Candidate] = []

    def plan(self, findings: Any) -> list[Candidate]:
        self.candidates = plan_repairs(self.doc, self.path, findings, self.opts)
        return self.candidates

    def run(self, findings: Any) -> HealResult:
        if self.check(self.doc.header.output or ""):
            return HealResult(ALREADY_PASSES, self.check.label)
        if not self.candidates:
            self.plan(findings)
        todo = [c for c in self.candidates if c.status == QUEUED]
        if not todo:
            return HealResult(NO_REPAIRS, self.check.label, self.candidates)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        workers = 1 if self.opts.mode == "agent" else max(1, self.opts.concurrency)
        queue = list(enumerate(self.candidates))
        threads = [
            threading.Thread(target=self._worker, args=(queue,), daemon=True, name=f"heal-{k}")
            for k in range(min(workers, len(todo)))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return self._result()

    # -- workers ------------------------------------------------------------------------
    def _next(self, queue: list[tuple[int, Candidate]]) -> tuple[int, Candidate] | None:
        with self.lock:
            while queue:
                rank, cand = queue.pop(0)
                if cand.status != QUEUED:
                    continue
                if self.cancel.cancelled or (self.best is not None and rank > self.best):
                    self._set(cand, CANCELLED if self.cancel.cancelled else SKIPPED)
                    continue
                if self.budget is not None and self.budget.exhausted:
                    self._set(cand, SKIPPED, "token budget spent")
                    continue
                cand.status = RUNNING
                return rank, cand
        return None

    def _worker(self, queue: list[tuple[int, Candidate]]) -> None:
        while (item := self._next(queue)) is not None:
            rank, cand = item
            self.on_update(cand)
            cand.cancel = LinkedToken(self.cancel)
            self._try(cand)
            with self.lock:
                if cand.status == PASSED and (self.best is None or rank < self.best):
                    self.best = rank
                    for later_rank, other in enumerate(self.candidates):
                        if later_rank > rank and other.status == RUNNING:
                            other.cancel.cancel()
            self.on_update(cand)

    def _set(self, cand: Candidate, status: str, error: str | None = None) -> None:
        cand.status, cand.error = status, error or cand.error
        self.on_update(cand)

    def _try(self, cand: Candidate) -> None:
        cand.path = str(self.out_dir / f"{cand.label}.loom.json")
        try:
            branch, status = attempt(self, cand)
        except Exception as err:  # noqa: BLE001 - one broken candidate must not end the heal
            cand.status, cand.error = ERROR, f"{type(err).__name__}: {err}"
            return
        cand.diverged_at = diverged_at(self.doc, branch, cand.step)
        cand.output = str(branch.get("output") or "")
        if status == "done":
            cand.status = PASSED if self.check(cand.output) else FAILED
        elif status == "budget" and not cand.tokens:  # not one call fitted: not tried
            cand.status = SKIPPED
        elif status == "cancelled":
            cand.status = CANCELLED if self.cancel.cancelled else SKIPPED
        else:
            cand.status = PAUSED if status == "needs_tool_result" else FAILED
            cand.error = cand.error or f"branch ended: {status}"

    # -- the result -----------------------------------------------------------------------
    def _result(self) -> HealResult:
        if self.best is None:
            status = "cancelled" if self.cancel.cancelled else NO_WINNER
            return HealResult(status, self.check.label, self.candidates)
        winner = self.candidates[self.best]
        data = json.loads(Path(str(winner.path)).read_text(encoding="utf-8"))
        data.pop("checksum", None)
        data["healed_by"] = winner.label
        save_dict(data, str(winner.path))
        regression = None
        if self.opts.save_regression:
            regression = save_regression(data, self.opts.save_regression)
        return HealResult(HEALED, self.check.label, self.candidates, winner, regression)


def diverged_at(doc: Document, branch: dict[str, Any], step: int) -> int | None:
    """Seq of the branch's first divergence from the parent, as Compare and ``diff`` name it:
    the first step from the fork point on whose kind, key or result differs from the parent's
    step at the same place. The steps before the fork point are the parent's (replayed), and
    the branch's first own step is its edit, so that is normally where it diverged; a branch
    with no edit diverges where its re-run first answered differently."""
    log = branch.get("log") or []
    start = find_model_effect(doc, step)
    for i in range(start, len(log)):
        entry = log[i]
        if (
            i >= len(doc.effects)
            or entry.get("kind") != doc.effects[i].kind
            or (entry.get("key") or "") != (doc.effects[i].key or "")
            or entry.get("result") != doc.result(i)
        ):
            seq: int | None = entry.get("seq")  # the branch's JSON: an effect's seq is an int
            return seq
    return None


def save_regression(data: dict[str, Any], directory: str | Path) -> str:
    """Save the healed branch as ``healed-<sha1[:10]>.loom.json`` (loom-harness's naming)."""
    body = {k: v for k, v in data.items() if k != "checksum"}
    digest = hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:10]
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    path = free_path(target, f"healed-{digest}")  # a file there is never replaced
    save_dict(dict(body), str(path))
    return str(path)
