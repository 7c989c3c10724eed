"""Rules, capabilities, precedence and profiles agree with loom-harness on a broad table.

Why: a policy is only portable if both proxies pick the same action *and* name
the same rule (the label lands in shield_events). loom-harness is the oracle.
"""

from __future__ import annotations

from typing import Any

import pytest
from loom.capabilities import capabilities as loom_capabilities
from loom.policy_file import PROFILES as LOOM_PROFILES
from loom.risk import classify_all as loom_classify_all

from loom_core.shield import (
    PROFILES,
    VOCABULARY,
    Shield,
    ShieldConfig,
    infer_capabilities,
    risk_categories,
    signature,
)
from tests.core.shield.calls import CALLS, FLAG_SETS
from tests.core.shield.oracle import TS, loom_pair, ordered

CALL_IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CALLS)]


@pytest.mark.parametrize(("name", "tool_input"), CALLS, ids=CALL_IDS)
def test_capabilities_and_risk_match_loom(name: str, tool_input: Any) -> None:
    assert infer_capabilities(name, tool_input) == loom_capabilities(name, tool_input)
    assert risk_categories(name, tool_input) == loom_classify_all(name, tool_input)
    assert infer_capabilities(name, tool_input) <= VOCABULARY


def test_profiles_are_loom_profiles_item_for_item() -> None:
    assert set(PROFILES) == set(LOOM_PROFILES)
    for name, theirs in LOOM_PROFILES.items():
        for key in ("default", "allow", "confirm", "deny", "sequence"):
            assert PROFILES[name].get(key) == theirs.get(key), (name, key)


@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: "+".join(f"{k}" for k in f))
def test_config_lists_match_loom_build_shield(flags: dict[str, Any]) -> None:
    theirs, ours, _ = loom_pair(flags)
    assert (list(ours.config.deny), list(ours.config.allow), list(ours.config.confirm)) == (
        theirs.deny,
        theirs.allow,
        theirs.confirm,
    )
    assert ours.config.default == theirs.default
    assert [r.raw for r in ours.tripwires.rules] == [r.raw for r in theirs.sequence]
    assert [(r.kind, r.trigger, r.consequences) for r in ours.tripwires.rules] == [
        (r.trigger_type, r.trigger, r.consequences) for r in theirs.sequence
    ]


@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: "+".join(f"{k}" for k in f))
def test_classify_matches_loom_on_every_call(flags: dict[str, Any]) -> None:
    theirs, ours, _ = loom_pair(flags)
    for name, tool_input in CALLS:
        assert ours.classify(name, tool_input) == theirs.classify(name, tool_input), signature(
            name, tool_input
        )


@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: "+".join(f"{k}" for k in f))
@pytest.mark.parametrize("answer", [None, ("approve", "alice"), ("deny", "bob"), ("approve", "")])
def test_a_whole_session_matches_loom(
    flags: dict[str, Any], answer: Any, frozen_loom: None
) -> None:
    """Every call in turn, one response each: sequence rules arm along the way."""
    theirs, ours, wait = loom_pair(flags, operator=lambda tool, tool_input: answer)
    for i, (name, tool_input) in enumerate(CALLS):
        response = {
            "id": f"m{i}",
            "content": [{"type": "tool_use", "id": f"t{i}", "name": name, "input": tool_input}],
            "stop_reason": "tool_use",
        }
        their_body, their_events = theirs.screen(response)
        result = ours.screen(response, wait)
        assert result.body == their_body, signature(name, tool_input)
        assert ordered(result.events) == ordered(their_events), signature(name, tool_input)


def test_precedence_deny_beats_allow_beats_confirm_beats_default() -> None:
    shield = Shield(
        ShieldConfig(deny=("Bash(*rm*)",), allow=("Bash*",), confirm=("*",), default="deny")
    )
    assert shield.classify("Bash", {"command": "rm x"}) == ("deny", "Bash(*rm*)")
    assert shield.classify("Bash", {"command": "ls"}) == ("allow", "Bash*")
    assert shield.classify("Read", {}) == ("confirm", "*")
    assert Shield(ShieldConfig(default="deny")).classify("Read", {}) == ("deny", "")


def test_decision_labels() -> None:
    shield = Shield(ShieldConfig(default="confirm", deny=("cap:secret",)))
    d = shield.decide("Read", {"file_path": "a.py"})
    assert (d.action, d.via, d.rule, d.label) == (
        "confirm",
        "default",
        "",
        "(shield default: confirm)",
    )
    d = shield.decide("Read", {"file_path": ".env"})
    assert (d.action, d.via, d.rule, d.label) == ("deny", "rule", "cap:secret", "cap:secret")
    d = Shield(ShieldConfig()).decide("Read", {})
    assert (d.action, d.via, d.rule) == ("allow", "default", "")


def test_matching_is_case_sensitive_and_whitespace_normalised() -> None:
    shield = Shield(ShieldConfig(deny=("Bash(*rm -rf*)",)))
    assert shield.classify("Bash", {"command": "rm    -rf  x"})[0] == "deny"
    # JSON escapes tabs and newlines, so they are not whitespace in the signature (as in loom)
    assert shield.classify("Bash", {"command": "rm\t-rf x"})[0] == "allow"
    assert shield.classify("bash", {"command": "rm -rf x"})[0] == "allow"
    assert shield.classify("Bash", {"command": "RM -RF x"})[0] == "allow"


def test_unencodable_input_falls_back_to_str() -> None:
    odd = {1: "a", "b": 2}  # mixed key types cannot be sorted
    assert signature("T", odd) == f"T({odd})"
    assert Shield(ShieldConfig(deny=("T(*a*)",))).classify("T", odd) == ("deny", "T(*a*)")
    assert TS  # the oracle module is imported for its fixture
