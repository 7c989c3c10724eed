"""What heal takes from a finding: what to redact and where the model first saw it.

Why: heal (§10.2) redacts every context item starting with a flagged item's
first 48 characters and forks before the model call that first saw it; the
checkup hands over both so heal never re-derives them.
"""

from __future__ import annotations

from pathlib import Path

from loom_core.cli.doctor import where
from loom_core.doctor import DUPLICATE, OVERSIZED, UNUSED, checkup_path
from tests.core.doctor.traces import WORDS, Trace


def test_harness_kinds_redact_every_item_with_the_same_prefix(tmp_path: Path) -> None:
    report_text = " ".join(WORDS[:12])
    t = Trace("check the report")
    first = t.use("report", report_text, day=1)
    second = t.use("report", report_text + " and more", day=2)  # same first 48 chars
    t.use("report", "something else entirely, alpha bravo", day=3)
    last = t.model("fine")
    report = checkup_path(t.save(tmp_path / "t.loom.json"))
    (dup,) = report.of_kind(DUPLICATE)
    assert dup.step == second and dup.redact_prefix == report_text[:48]
    assert dup.redact_targets == (first, second)
    assert dup.model_step == second + 1
    unused = {f.step: f for f in report.of_kind(UNUSED)}
    assert unused[first].redact_targets == (first, second)
    assert unused[first].model_step == first + 1
    assert last == second + 3


def test_an_item_no_model_call_saw_has_no_model_step(tmp_path: Path) -> None:
    t = Trace("fetch it")
    c = t.call("fetch", url="u")
    t.model("", [c])
    seq = t.result(c, "w" * 1000)
    (f,) = checkup_path(t.save(tmp_path / "t.loom.json")).of_kind(OVERSIZED)
    assert f.step == seq and f.model_step is None and f.redact_targets == (seq,)


def test_an_episode_finding_points_at_the_call_it_preceded(tmp_path: Path) -> None:
    """A repeated user message: it entered the context right before the second turn."""
    text = " ".join(WORDS[:8])
    t = Trace(text, text)
    t.model("first answer")
    second_turn = t.model("second answer")
    (f,) = checkup_path(t.save(tmp_path / "t.loom.json")).of_kind(DUPLICATE)
    assert (f.episode, f.effect, f.step, f.model_step) == (1, None, second_turn, second_turn)
    assert f.redact_prefix == text[:48] and f.redact_targets == ()  # no effect holds it
    assert where(f) == f" in the user prompt before step {second_turn}"  # a prompt is no step


def test_an_unplaced_episode_has_no_step(tmp_path: Path) -> None:
    text = " ".join(WORDS[:8])
    t = Trace(text, text)
    t.model("the only turn")
    (f,) = checkup_path(t.save(tmp_path / "t.loom.json")).of_kind(DUPLICATE)
    assert (f.episode, f.step, f.model_step) == (1, None, None)
