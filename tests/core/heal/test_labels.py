"""Heal's candidate labels are loom-harness's for the same repair (loom-format.md §10.2).

Why against loom-harness itself: ``redact-<kind>-<index>`` indexes loom-harness's own
findings list, so the oracle is its ``checkup().experiments()`` on the same file. Our
extra kinds (stale, bloat, loops) must never shift the harness kinds' indices.
"""

from __future__ import annotations

from pathlib import Path

from loom import Run

from loom_core.doctor import HARNESS_KINDS, checkup
from loom_core.formats.loader import load
from loom_core.heal.repairs import plan_candidates
from tests.core.doctor.test_loom_doctor import bloated_run, mixed_run
from tests.core.harness_runs import Recorded
from tests.core.heal.scenario import poisoned_run


def labels(path: Path) -> tuple[set[str], set[str]]:
    """(our harness-kind candidate labels, loom-harness's experiment labels)."""
    doc = load(path)
    ours = plan_candidates(doc, path, checkup(doc).findings, 20)
    theirs, _edits = Run.load(str(path)).checkup().experiments()
    return {c.label for c in ours if c.kind in HARNESS_KINDS}, set(theirs)


def test_labels_follow_loom_harness_when_step_order_differs(tmp_path: Path) -> None:
    path = mixed_run(tmp_path)
    assert checkup(load(path)).of_kind("error_loop")  # ours, at an earlier step than the page
    ours, theirs = labels(path)
    assert "redact-oversized-0" in ours and any(k.startswith("redact-unused-") for k in ours)
    assert ours <= theirs, (ours, theirs)


def test_labels_follow_loom_harness_on_the_recorded_scenarios(
    tmp_path: Path, harness_traces: dict[str, Recorded]
) -> None:
    paths = [bloated_run(tmp_path), poisoned_run(tmp_path)]
    paths += [rec.path for rec in harness_traces.values()]
    planned = 0
    for path in paths:
        ours, theirs = labels(path)
        assert ours <= theirs, (path.name, ours, theirs)
        planned += len(ours)
    assert planned >= 3
