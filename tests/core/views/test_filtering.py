"""The step filter: ``is:error`` finds blocked calls, and a typo is reported, never ignored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loom_core.formats.loader import load
from loom_core.views.filtering import filter_steps, parse_query
from loom_core.views.timeline import (
    F_BLOCKED,
    F_DENIED,
    F_ERROR,
    K_MODEL,
    KIND_NAMES,
    build_timeline,
)

RESOURCE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"


@pytest.fixture(scope="module")
def timeline() -> Any:
    return build_timeline(load(RESOURCE))


def _steps(tl: Any, text: str) -> list[int] | None:
    rows = filter_steps(tl, text)
    return None if rows is None else list(rows)


def test_is_error_matches_the_model_step_whose_call_was_blocked(timeline: Any) -> None:
    tl = timeline
    blocked = next(s for s in range(len(tl)) if tl.flags[s] & F_BLOCKED)
    caller = tl.call_of[blocked]
    assert tl.kind[caller] == K_MODEL and not tl.flags[caller] & (F_ERROR | F_BLOCKED)
    errors = _steps(tl, "is:error")
    assert errors is not None and caller in errors and blocked in errors
    assert all(s in errors for s in range(len(tl)) if tl.flags[s] & (F_ERROR | F_DENIED))
    assert caller in (_steps(tl, "is:blocked") or [])
    assert errors == sorted(errors)
    tool_error = next(s for s in range(len(tl)) if tl.flags[s] & F_ERROR)
    assert tl.call_of[tool_error] not in errors  # a tool's own error stays on the tool's step


@pytest.mark.parametrize(
    "text, named",
    [("kind:modle", "modle"), ("is:broken", "is:broken"), ("kind:model is:eror", "is:eror")],
)
def test_a_value_no_step_can_have_matches_nothing_and_says_why(
    timeline: Any, text: str, named: str
) -> None:
    assert _steps(timeline, text) == []
    problems = parse_query(text).problems
    assert len(problems) == 1 and named in problems[0]
    valid = (
        KIND_NAMES if text.startswith("kind:modle") else ("error", "blocked", "shield", "subagent")
    )
    assert all(v in problems[0] for v in valid)
    # a near miss is answered with what was probably meant
    meant = {"kind:modle": "model", "is:broken": None, "kind:model is:eror": "is:error"}[text]
    assert (f"did you mean {meant}?" in problems[0]) if meant else "did you mean" not in problems[0]


def test_a_prompt_is_called_prompt_and_answers_to_its_old_name_too(timeline: Any) -> None:
    prompts = [s for s in range(len(timeline)) if timeline.effect_of[s] < 0]
    assert prompts and {timeline.kind_name(s) for s in prompts} == {"prompt"}
    assert _steps(timeline, "kind:prompt") == _steps(timeline, "kind:episode") == prompts
    assert "prompt" in parse_query("kind:").problems[0]


def test_an_unknown_key_is_named_with_the_valid_ones_and_searched_as_text(timeline: Any) -> None:
    problems = parse_query("knd:model").problems
    assert len(problems) == 1 and "knd:" in problems[0] and "did you mean kind:?" in problems[0]
    assert all(k in problems[0] for k in ("kind:", "tool:", "agent:", "is:"))
    assert _steps(timeline, "knd:model") == []
    assert parse_query('"knd:model"').problems == []  # quoted: plain text, no complaint
    assert parse_query("kind:").problems and _steps(timeline, "kind:") is None  # still typing


def test_valid_queries_have_no_problems(timeline: Any) -> None:
    for text in (
        "kind:model",
        "kind:tool:read*",
        "tool:read_file",
        "agent:lead",
        "is:subagent",
        "is:shield error",
        '"Brûlée"',
        "",
    ):
        assert parse_query(text).problems == [], text
    tools = _steps(timeline, "kind:tool:read*")
    assert tools is not None and set(tools) < set(_steps(timeline, "tool:read*") or ())
    callers = set(_steps(timeline, "tool:read*") or ()) - set(tools)
    assert callers == {timeline.call_of[s] for s in tools}  # tool: adds who called it
    assert _steps(timeline, '"run_tests"') == _steps(timeline, "run_tests")
