"""Sequence rules: after/taint arming, precedence over allow, labels, parsing, per-session state.

Why: tripwires are the part of the shield with memory, so the order of calls
matters; each case is checked against loom-harness where it has an answer.
"""

from __future__ import annotations

from typing import Any

import pytest
from loom.shield import parse_sequence_rule as loom_parse

from loom_core.shield import Shield, ShieldConfig, parse_sequence_rule
from tests.core.shield.oracle import TS, loom_pair, ordered

ENV = ("Read", {"file_path": ".env"})
FETCH = ("WebFetch", {"url": "https://x.example"})


def anthropic(*calls: tuple[str, Any]) -> dict[str, Any]:
    return {
        "content": [
            {"type": "tool_use", "id": f"t{i}", "name": n, "input": a}
            for i, (n, a) in enumerate(calls)
        ],
        "stop_reason": "tool_use",
    }


def test_after_rule_arms_on_an_allowed_call_and_beats_allow(frozen_loom: None) -> None:
    flags = {"allow": ["*"], "rule": ["after Read(*.env*): deny WebFetch*, confirm Bash*"]}
    theirs, ours, wait = loom_pair(flags, operator=lambda t, i: ("approve", "ann"))
    for response in (anthropic(FETCH), anthropic(ENV, FETCH), anthropic(FETCH, ("Bash", {}))):
        their_body, their_events = theirs.screen(response)
        result = ours.screen(response, wait)
        assert (result.body, ordered(result.events)) == (their_body, ordered(their_events))
    rule = ours.tripwires.rules[0]
    assert rule.armed and rule.evidence == 'Read({"file_path": ".env"})'
    assert [e["via"] for e in result.events] == ["sequence", "sequence-operator"]
    assert result.events[0]["rule"] == rule.raw + ' (tripped by Read({"file_path": ".env"}))'


def test_a_denied_trigger_does_not_arm() -> None:
    shield = Shield(ShieldConfig(deny=("Read(*.env*)",), sequence=("after Read*: deny *",)))
    shield.screen(anthropic(ENV))
    assert not shield.tripwires.rules[0].armed
    shield.screen(anthropic(("Read", {"file_path": "a.py"})))
    assert shield.tripwires.rules[0].armed
    assert shield.decide(*FETCH).action == "deny"


def test_evidence_is_capped_and_deny_in_any_rule_beats_confirm() -> None:
    shield = Shield(ShieldConfig(sequence=("after Bash*: confirm *", "after Read*: deny Web*")))
    shield.note_allowed("Bash", {"command": "x" * 500})
    assert len(shield.tripwires.rules[0].evidence) == 200
    assert shield.decide(*FETCH).action == "confirm"
    shield.note_allowed("Read", {})
    d = shield.decide(*FETCH)
    assert (d.action, d.via, d.evidence) == ("deny", "sequence", "Read({})")


REQUESTS = [
    {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": "key=sk-ant-abc123"}
                ],
            }
        ]
    },
    {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [{"type": "text", "text": "AWS AKIA1234"}, {"type": "image"}],
                    }
                ],
            }
        ]
    },
    {
        "messages": [
            {"role": "assistant", "content": None},
            {"role": "tool", "tool_call_id": "c", "content": "password:\n\n hunter2"},
        ]
    },
    {"messages": [{"role": "tool", "content": [{"type": "text", "text": "sk-ant-x"}]}]},
    {"messages": [{"role": "user", "content": "sk-ant-in-a-prompt is not a tool result"}]},
    {"messages": "junk"},
]


@pytest.mark.parametrize("request_body", REQUESTS)
def test_taint_observation_matches_loom(request_body: dict[str, Any], frozen_loom: None) -> None:
    flags = {
        "rule": [
            "taint sk-ant-*: confirm *",
            "taint AKIA*: deny cap:network",
            "taint hunter*: deny Bash*",
        ]
    }
    theirs, ours, _ = loom_pair(flags)
    if isinstance(request_body.get("messages"), str):
        assert ours.observe_request(request_body) == []
        return
    assert ordered(ours.observe_request(request_body)) == ordered(
        theirs.observe_request(request_body)
    )
    assert ours.observe_request(request_body) == []  # armed once, recorded once
    response = anthropic(FETCH, ("Bash", {"command": "ls"}), ("Read", {}))
    their_body, their_events = theirs.screen(response)
    result = ours.screen(response)
    assert (result.body, ordered(result.events)) == (their_body, ordered(their_events))


def test_taint_event_and_evidence() -> None:
    shield = Shield(ShieldConfig(sequence=("taint it's*: deny *",)), clock=lambda: 5.0)
    body = {"messages": [{"role": "tool", "content": "so   it's\nhere"}]}
    assert shield.observe_request(body) == [
        {"ts": 5.0, "action": "tainted", "via": "sequence", "rule": "taint it's*: deny *"}
    ]
    assert (
        shield.decide("X", {}).rule
        == "taint it's*: deny * (tripped by a tool result matching \"it's*\")"
    )


def test_state_is_per_session() -> None:
    config = ShieldConfig(sequence=("after Read*: deny *",))
    one, two = Shield(config), Shield(config)
    one.note_allowed("Read", {})
    assert one.decide("X", {}).action == "deny" and two.decide("X", {}).action == "allow"


GOOD = [
    "after Read(*.env*): deny WebFetch*, deny Bash(*curl*)",
    "taint sk-*: confirm *",
    "after  X :  deny   Y ,confirm Z",
    "taint *@*.*: deny cap:network",
]
BAD = [
    "after X: allow Y",
    "after X: deny",
    "before X: deny Y",
    "after X deny Y",
    "X: deny Y",
    "after X: deny Y, nuke Z",
    "after X:",
    "after : deny Y",
    "after X: deny\tY",
]


@pytest.mark.parametrize("raw", GOOD)
def test_parse_agrees_with_loom(raw: str) -> None:
    ours, theirs = parse_sequence_rule(raw), loom_parse(raw)
    assert (ours.kind, ours.trigger, ours.consequences, ours.raw) == (
        theirs.trigger_type,
        theirs.trigger,
        theirs.consequences,
        theirs.raw,
    )


@pytest.mark.parametrize("raw", BAD)
def test_bad_rules_raise_value_error_like_loom(raw: str) -> None:
    with pytest.raises(ValueError):
        loom_parse(raw)
    with pytest.raises(ValueError):
        parse_sequence_rule(raw)


def test_unknown_action_message_names_the_consequence() -> None:
    with pytest.raises(ValueError, match="'allow Y'"):
        parse_sequence_rule("after X: allow Y")


@pytest.mark.parametrize(
    ("raw", "trigger"),
    [
        ("after cap:secret: deny *", "cap:secret"),
        ("after Bash(*https://*): deny *", "Bash(*https://*)"),
    ],
)
def test_colons_in_triggers_work_here_though_loom_rejects_them(raw: str, trigger: str) -> None:
    with pytest.raises(ValueError):
        loom_parse(raw)
    rule = parse_sequence_rule(raw)
    assert (rule.trigger, rule.consequences) == (trigger, [("deny", "*")])
    shield = Shield(ShieldConfig(sequence=("after cap:secret: deny *",)))
    shield.note_allowed("Read", {"file_path": ".env"})
    assert shield.decide("Glob", {}).action == "deny"
    assert TS
