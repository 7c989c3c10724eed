"""Candidate repairs: one redaction per checkup finding, cheapest first.

Why redact rather than drop: a tool result removed from the context would leave
its call unanswered, which every API refuses; replacing its content keeps the
call/result pair valid (loom-format.md §10.2). Why fork at the first model step
that saw the item: that is the earliest point where it could have misled the
model. Why cheapest first: the dry-run estimate of each fork orders them, so a
cheap repair that works is found before an expensive one is paid for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loom_core.fork.edits import Edit
from loom_core.fork.plan import dry_run
from loom_core.formats.document import Document
from loom_core.providers.base import CancelToken

QUEUED, RUNNING, PASSED, FAILED = "queued", "running", "passed", "failed"
PAUSED, ERROR, CANCELLED, SKIPPED = "paused", "error", "cancelled", "skipped"


@dataclass
class Candidate:
    """One repair and, once tried, how it went."""

    label: str  # loom-harness's label shape: redact-<kind>-<finding index>
    kind: str
    step: int  # the model step (seq) the branch forks at
    targets: tuple[int, ...]  # effect seqs whose results are redacted
    estimate: int  # dry-run tokens
    message: str = ""  # the finding in one line
    status: str = QUEUED
    tokens: int = 0
    diverged_at: int | None = None  # first tail step (branch seq) that differs from the parent
    output: str = ""
    path: str | None = None
    error: str | None = None
    cancel: CancelToken = field(default_factory=CancelToken, repr=False)

    @property
    def edit(self) -> Edit:
        return Edit(redact=list(self.targets), reason=f"heal: {self.label} ({self.message})")

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k != "cancel"} | {
            "targets": list(self.targets)
        }


def plan_candidates(
    doc: Document,
    path: str | Path,
    findings: Any,
    max_turns: int,
    max_candidates: int | None = None,
) -> list[Candidate]:
    """Candidates for ``findings`` (a checkup's), deduplicated, cheapest first.

    A finding with nothing to redact, or never seen by a top-level model call, has
    no repair; two findings about the same results make one candidate. A label's index
    is the finding's position in ``findings``: a checkup lists loom doctor's kinds first,
    in its order, so for those it is loom-harness's own label for the same repair.
    """
    seen: set[tuple[int, ...]] = set()
    out: list[Candidate] = []
    results = {
        e.seq for e in doc.effects if (e.kind or "").startswith("tool:") or e.kind == "human"
    }
    for i, finding in enumerate(findings):
        # only results can be redacted; the same text in a model answer stays (it is the run)
        targets = tuple(sorted(t for t in finding.redact_targets if t in results))
        if not targets or targets in seen or finding.model_step is None:
            continue
        seen.add(targets)
        label = f"redact-{finding.kind}-{i}"
        cand = Candidate(label, finding.kind, finding.model_step, targets, 0, finding.text)
        try:
            cand.estimate = dry_run(doc, path, cand.step, cand.edit, max_turns).total_tokens
        except ValueError as err:  # e.g. the step is a sub-agent's: not a fork point
            # said beside the run it is about: its path would only push the reason away
            cand.status, cand.error = SKIPPED, str(err).removeprefix(f"{doc.path}: ")
        out.append(cand)
    order = sorted(range(len(out)), key=lambda k: (out[k].status == SKIPPED, out[k].estimate, k))
    ranked = [out[k] for k in order]
    return ranked if max_candidates is None else ranked[: max(0, max_candidates)]
