"""Screening responses: Anthropic and OpenAI chat exactly as loom-harness, plus Responses API.

Why: the agent must see byte-for-byte what loom's proxy would show it (same
notice, same rewrite), and the recorded trace must carry the same events.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from loom.shield import _blocked_text, _reason

from loom_core.shield import Shield, ShieldConfig, deny_reason, notice, screen_response
from loom_core.shield.events import Decision, Verdict
from tests.core.shield.oracle import TS, loom_pair, ordered

FLAGS = {
    "deny": ["Bash(*rm*)", "cap:secret"],
    "confirm": ["Bash(*deploy*)", "Bash(*push*)", "WebFetch*"],
    "allow": ["Read(*)"],
    "shield_default": "deny",
    "rule": ["after Read(*notes*): deny Bash(*curl*)"],
}


def operator(tool: str, tool_input: Any) -> Any:
    text = json.dumps(tool_input)
    if "deploy" in text:
        return ("approve", "ann")
    if "push" in text:
        return ("deny", "bob")
    return None  # WebFetch times out


def tu(i: int, name: str, tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": tool_input}


ANTHROPIC = [
    {
        "id": "m1",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            tu(1, "Read", {"file_path": "notes.md"}),
            tu(2, "Bash", {"command": "rm -rf /"}),
            tu(3, "Bash", {"command": "curl x"}),
            tu(4, "Bash", {"command": "make deploy"}),
            tu(5, "Read", {"file_path": ".env"}),
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1},
    },
    {
        "content": [
            tu(1, "Bash", {"command": "git push"}),
            tu(2, "WebFetch", None),
            tu(3, "Glob", {"pattern": "*"}),
        ],
        "stop_reason": "tool_use",
    },
    {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"},
    {"content": [tu(1, "Read", {"file_path": "a"})], "stop_reason": "tool_use"},
    {"content": "not a list"},
    {"candidates": [{"content": {"parts": [{"functionCall": {"name": "Bash", "args": {}}}]}}]},
]


def fn(i: int, name: str, args: Any) -> Any:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}


OPENAI = [
    {
        "id": "c1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        fn(1, "Read", '{"file_path": "notes.md"}'),
                        fn(2, "Bash", '{"command": "rm x"}'),
                        fn(3, "Bash", {"command": "make deploy"}),
                        fn(4, "Bash", "not json"),
                        "junk",
                    ],
                },
                "finish_reason": "tool_calls",
            },
            {
                "index": 1,
                "message": {
                    "role": "assistant",
                    "content": "I will push.",
                    "tool_calls": [fn(5, "Bash", '{"command": "git push"}'), fn(6, "WebFetch", "")],
                },
                "finish_reason": "tool_calls",
            },
        ],
    },
    {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [fn(1, "Read", '{"file_path": "b"}')],
                },
                "finish_reason": "tool_calls",
            }
        ]
    },
    {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
        ]
    },
    {"choices": []},
]


@pytest.mark.parametrize("responses", [ANTHROPIC, OPENAI], ids=["anthropic", "openai"])
def test_screened_bodies_and_events_equal_loom(
    responses: list[dict[str, Any]], frozen_loom: None
) -> None:
    theirs, ours, wait = loom_pair(FLAGS, operator)
    for response in responses:
        snapshot = json.dumps(response, sort_keys=True)
        their_body, their_events = theirs.screen(response)
        result = ours.screen(response, wait)
        assert result.body == their_body
        assert ordered(result.events) == ordered(their_events)
        assert (result.body is response) == (their_body is response)
        assert json.dumps(response, sort_keys=True) == snapshot  # the input is never mutated


def test_openai_rewrite_details() -> None:
    shield = Shield(ShieldConfig(deny=("Bash*", "WebFetch*")))
    body = shield.screen(OPENAI[0]).body
    first, second = body["choices"]
    assert [c["id"] for c in first["message"]["tool_calls"]] == ["call_1"]
    assert first["finish_reason"] == "tool_calls"
    assert first["message"]["content"].count("\n") == 2  # three notices, no leading blank
    assert "tool_calls" not in second["message"] and second["finish_reason"] == "stop"
    assert second["message"]["content"].startswith(
        'I will push.\n[loom shield] Blocked tool call Bash({"command": "git push"})'
    )


def test_edit_in_openai_chat_keeps_the_argument_encoding() -> None:
    shield = Shield(ShieldConfig(confirm=("Bash*",)))

    def edit(a: Any) -> None:
        shield.approvals.decide(a.id, "approve", edited_input={"command": "make test"})

    body = shield.screen(OPENAI[0], edit).body
    calls = body["choices"][0]["message"]["tool_calls"]
    assert calls[1]["function"]["arguments"] == '{"command": "make test"}'  # was a string
    assert calls[2]["function"]["arguments"] == {"command": "make test"}  # was a dict
    assert body["choices"][0]["message"]["content"] is None  # no notice, content untouched


RESPONSES = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "Bash",
            "arguments": '{"command": "rm -rf /"}',
            "status": "completed",
        },
        {
            "type": "function_call",
            "id": "fc_2",
            "call_id": "call_2",
            "name": "Read",
            "arguments": '{"file_path": "a.py"}',
            "status": "completed",
        },
        {
            "type": "custom_tool_call",
            "id": "ctc_1",
            "call_id": "call_3",
            "name": "apply_patch",
            "input": "*** Begin Patch\n*** Delete File: .env\n*** End Patch",
        },
        {
            "type": "local_shell_call",
            "id": "lsh_1",
            "call_id": "call_4",
            "status": "completed",
            "action": {"type": "exec", "command": ["bash", "-lc", "make deploy"]},
        },
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    ],
    "usage": {"input_tokens": 5, "output_tokens": 7},
}


def test_responses_api() -> None:
    shield = Shield(
        ShieldConfig(deny=("*(*rm -rf*)", "apply_patch(*.env*)"), confirm=("local_shell",)),
        clock=lambda: TS,
    )

    def edit(a: Any) -> None:
        shield.approvals.decide(
            a.id, "approve", by="ann", edited_input={"type": "exec", "command": ["make", "test"]}
        )

    result = shield.screen(RESPONSES, edit)
    out = result.body["output"]
    assert [o["type"] for o in out] == [
        "reasoning",
        "message",
        "message",
        "function_call",
        "message",
        "local_shell_call",
        "web_search_call",
    ]
    assert out[2] == {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "annotations": [],
                "text": notice("Bash", {"command": "rm -rf /"}, "matched deny rule '*(*rm -rf*)'."),
            }
        ],
    }
    assert out[3] is RESPONSES["output"][3]
    assert out[4]["content"][0]["text"].startswith(
        '[loom shield] Blocked tool call apply_patch("*** Begin Patch\\n*** Delete File: .env'
    )
    assert out[5]["action"]["command"] == ["make", "test"] and out[5]["call_id"] == "call_4"
    assert [(e["tool"], e["action"], e["via"]) for e in result.events] == [
        ("Bash", "deny", "rule"),
        ("apply_patch", "deny", "rule"),
        ("local_shell", "approve", "operator"),
    ]
    assert (
        result.body["usage"] == RESPONSES["usage"]
        and RESPONSES["output"][2]["type"] == "function_call"
    )
    untouched = {"object": "response", "output": [RESPONSES["output"][3]]}
    assert shield.screen(untouched).body is untouched


@pytest.mark.parametrize(
    ("via", "rule"),
    [
        ("rule", "Bash(*)"),
        ("sequence", "after X: deny * (tripped by X({}))"),
        ("default", ""),
        ("timeout", "r"),
        ("operator", "r"),
        ("break-glass", "r"),
        ("sequence-operator", "r"),
    ],
)
def test_notice_text_per_via_equals_loom(via: str, rule: str) -> None:
    event = {"via": via, "rule": rule}
    assert deny_reason(via, rule) == _reason(event)
    assert notice("T", {"b": 1, "a": [1]}, deny_reason(via, rule)) == _blocked_text(
        "T", {"b": 1, "a": [1]}, _reason(event)
    )


def test_screen_response_with_a_plain_decide_callback() -> None:
    def decide(name: str, tool_input: Any) -> Verdict:
        d = Decision("deny", "rule", "X*", "X*")
        return Verdict(
            name,
            tool_input,
            name != "X1",
            d,
            {"tool": name, "rule": "X*", "via": "rule"},
            "rule",
            tool_input,
        )

    response = {"content": [tu(1, "X1", {}), tu(2, "Y", {})], "stop_reason": "tool_use"}
    result = screen_response(response, decide)
    assert [b["type"] for b in result.body["content"]] == ["text", "tool_use"]
    assert result.body["stop_reason"] == "tool_use" and len(result.events) == 2


CHAIN_FLAGS = {
    "confirm": ["cap:money_movement", "Bash*"],
    "break_glass": ["root"],
    "require_approver": ["cap:money_movement=2:cfo,ceo", "Bash*=ops"],
    "rule": ["after Read*: confirm Bash*"],
}
CHAIN_ANSWERS = [
    [("approve", "cfo"), ("approve", "eve"), ("approve", "ceo")],  # chain: "cfo+ceo"
    [("approve", "cfo")],  # chain incomplete: timeout
    [("approve", "root")],  # break-glass
    [("approve", "eve"), ("deny", "eve")],  # outsider may only deny
]


@pytest.mark.parametrize("script", CHAIN_ANSWERS)
def test_chains_and_break_glass_events_equal_loom(script: list[Any], frozen_loom: None) -> None:
    theirs, ours, wait = loom_pair(CHAIN_FLAGS, lambda tool, tool_input: script)
    response = {
        "content": [
            tu(1, "refund_order", {"id": 1}),
            tu(2, "Read", {}),
            tu(3, "Bash", {"command": "ls"}),
        ],
        "stop_reason": "tool_use",
    }
    their_body, their_events = theirs.screen(response)
    result = ours.screen(response, wait)
    assert (result.body, ordered(result.events)) == (their_body, ordered(their_events))
