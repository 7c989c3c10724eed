"""A step that stands for a call (a compaction's summary, a grader's score) counts its tokens.

loom-harness records a ``compact`` or ``critic`` effect without the call that made it; a
foreign reader that knows that call's usage puts it in ``meta.usage``. Every face --
the timeline and its totals, the step row, ``summary --json``, ``diff`` -- must count and
price it once, the same way, and never treat the step as a model turn. The dollars are
worked out by hand from genai-prices' rates for claude-sonnet-4-5 ($3 in, $15 out, $0.30
cache read, $3.75 cache write per million).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loom_core.diff.usage import run_usage
from loom_core.formats.entries import effect_entry
from loom_core.formats.foreign import RunBuilder
from loom_core.formats.loader import load
from loom_core.views.steps import step_row
from loom_core.views.summary import summarize
from loom_core.views.timeline import K_MODEL, build_timeline
from tests.core.clis import core, loom

MODEL = "claude-sonnet-4-5"
CALL = {"input_tokens": 1000, "output_tokens": 200}
SUMMARY_CALL = {
    "input_tokens": 3,
    "output_tokens": 50,
    "cache_creation_input_tokens": 2000,
    "cache_read_input_tokens": 10000,
}
CALL_USD = (1000 * 3 + 200 * 15) / 1e6
SUMMARY_USD = (3 * 3 + 2000 * 3.75 + 10000 * 0.3 + 50 * 15) / 1e6


def _step(run: RunBuilder, kind: str, result: Any, usage: Any, model: str = "") -> None:
    """A step that stands for a call, as a reader writes it (by hand: the test must also
    run on code that has no helper for it)."""
    meta = {"usage": usage, **({"model": model} if model else {})}
    run.log.append(effect_entry(len(run.log), kind, {"n": len(run.log)}, result, 0, meta))


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    run = RunBuilder(model=MODEL, episodes=["do it"])
    run.add_model("first answer", [], dict(CALL))
    _step(run, "compact", "the summary", dict(SUMMARY_CALL))
    run.add_model("final answer", [], dict(CALL))
    _step(run, "critic", {"score": 1.0, "critique": "GRADE: C"}, dict(CALL), MODEL)
    path = tmp_path / "billed.loom.json"
    path.write_text(json.dumps(run.trace()))
    return path


def test_the_timeline_counts_and_prices_each_call_once(trace: Path) -> None:
    tl = build_timeline(load(trace))
    kinds = [tl.kind_name(s) for s in range(len(tl))]
    steps = {k: kinds.index(k) for k in ("compact", "critic")}
    assert tl.input_tokens == 3 * 1000 + 3
    assert tl.output_tokens == 3 * 200 + 50
    row = step_row(tl, steps["compact"])
    assert row.tokens == 53 and row.cost == pytest.approx(SUMMARY_USD)
    assert step_row(tl, steps["critic"]).cost == pytest.approx(CALL_USD)
    assert tl.total_cost == pytest.approx(3 * CALL_USD + SUMMARY_USD)
    assert sum(tl.kind[s] == K_MODEL for s in range(len(tl))) == 2  # not model turns


def test_summary_and_diff_agree_with_the_timeline(trace: Path) -> None:
    doc = load(trace)
    facts = summarize(doc, "valid")
    assert (facts["input_tokens"], facts["output_tokens"]) == (3003, 650)
    assert facts["cost_usd"] == pytest.approx(3 * CALL_USD + SUMMARY_USD, abs=1e-6)
    assert facts["output"] == "final answer"  # a grader's verdict is not the run's answer
    usage = run_usage(doc).totals()
    assert (usage.input_tokens, usage.output_tokens) == (3003, 650)
    assert usage.cost == pytest.approx(3 * CALL_USD + SUMMARY_USD)


def test_loom_harness_verifies_and_loads_it(trace: Path) -> None:
    from loom import Run

    assert loom("trace", "verify", trace).returncode == 0
    run = Run.load(str(trace))
    assert [e.kind for e in run.log] == ["model", "compact", "model", "critic"]
    done = core("summary", "--json", trace)
    assert json.loads(done.stdout)["input_tokens"] == 3003


@pytest.mark.parametrize("usage", [5, "many", [1, 2], None])
def test_a_usage_that_is_not_an_object_is_not_counted(tmp_path: Path, usage: Any) -> None:
    run = RunBuilder(model=MODEL)
    run.add_model("a", [], dict(CALL))
    _step(run, "compact", "s", usage)
    path = tmp_path / "odd.loom.json"
    path.write_text(json.dumps(run.trace()))
    doc = load(path)
    tl = build_timeline(doc)
    assert tl.input_tokens == summarize(doc, "absent")["input_tokens"] == 1000
    assert run_usage(doc).totals().input_tokens == 1000


def test_a_reader_records_such_a_step_with_its_call(tmp_path: Path) -> None:
    run = RunBuilder(model=MODEL)
    seq = run.add_call_step("compact", {"turn": 1}, "s", dict(CALL), meta={"model": MODEL})
    assert run.log[seq]["meta"] == {"model": MODEL, "usage": CALL}
    assert "usage" not in run.log[run.add_call_step("compact", {"turn": 2}, "s", None)].get(
        "meta", {}
    )
    assert run.output == ""  # a summary or a verdict is never the run's answer
