"""The wire half of fork mode: request identity and edits, per dialect (pure functions)."""

from __future__ import annotations

import copy
import json

from loom_core.fork.edits import Edit
from loom_core.proxy.forkwire import (
    merge_note,
    reapply_note,
    redact_results,
    request_digest,
    set_sampling,
    set_system,
    snapshot_items,
)

TOOLS = [{"name": "b"}, {"name": "a"}]
ANTHROPIC = {
    "model": "m",
    "system": "Be kind. build_id=1.2.3",
    "tools": TOOLS,
    "messages": [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
        },
    ],
}
CHAT = {
    "model": "g",
    "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "a", "arguments": '{"x": 1}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ],
}
RESPONSES = {
    "model": "r",
    "instructions": "sys",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "call_id": "f1", "name": "a", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "f1", "output": "ok"},
    ],
}


def test_the_digest_is_the_content_not_the_bytes() -> None:
    d = request_digest(ANTHROPIC, "anthropic")
    other = json.loads(json.dumps(ANTHROPIC, sort_keys=True))  # members reordered
    other["system"] = "Be kind. build_id=9.9.9"  # volatile ids are normalised away
    other["tools"] = TOOLS[::-1]
    other["max_tokens"], other["model"] = 99, "else"  # sampling/model are not the context
    assert request_digest(other, "anthropic") == d
    changed = copy.deepcopy(ANTHROPIC)
    changed["messages"][2]["content"][0]["content"] = "not ok"  # a tool result differs
    assert request_digest(changed, "anthropic") != d
    chat = copy.deepcopy(CHAT)
    chat["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{ "x" : 1 }'
    assert request_digest(chat, "openai") == request_digest(CHAT, "openai")
    assert len(d) == 16 and request_digest(RESPONSES, "responses") != d


def test_the_note_is_merged_then_reapplied_where_it_went() -> None:
    first = {"messages": [{"role": "user", "content": "go"}]}
    spot = merge_note(first, "anthropic", "N")
    assert spot == ("merge", 0) and first["messages"][0]["content"] == "go\n\nN"
    later = {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": "more"},
        ]
    }
    reapply_note(later, "anthropic", "N", spot)
    assert [m["content"] for m in later["messages"]] == ["go\n\nN", "x", "more"]

    blocks = copy.deepcopy(ANTHROPIC)
    assert merge_note(blocks, "anthropic", "N") == ("merge", 2)
    assert blocks["messages"][2]["content"][-1] == {"type": "text", "text": "N"}

    chat = copy.deepcopy(CHAT)
    spot = merge_note(chat, "openai", "N")  # after tool results: a user turn is added
    assert spot == ("insert", 4) and chat["messages"][4] == {"role": "user", "content": "N"}
    later = copy.deepcopy(CHAT)
    later["messages"] += [{"role": "assistant", "content": "done"}]
    reapply_note(later, "openai", "N", spot)
    assert [m["role"] for m in later["messages"][3:]] == ["tool", "user", "assistant"]

    resp = copy.deepcopy(RESPONSES)
    assert merge_note(resp, "responses", "N") == ("insert", 3)
    text = {"input": "hi"}
    assert merge_note(text, "responses", "N") == ("text", 0) and text["input"] == "hi\n\nN"
    user_last = {"input": [{"role": "user", "content": [{"type": "input_text", "text": "go"}]}]}
    merge_note(user_last, "responses", "N")
    assert user_last["input"][0]["content"][-1] == {"type": "input_text", "text": "N"}


def test_system_redact_and_sampling_in_each_dialect() -> None:
    a, c, r = copy.deepcopy(ANTHROPIC), copy.deepcopy(CHAT), copy.deepcopy(RESPONSES)
    set_system(a, "anthropic", "S")
    set_system(c, "openai", "S")
    set_system(r, "responses", "S")
    assert a["system"] == "S" and c["messages"][0] == {"role": "system", "content": "S"}
    assert r["instructions"] == "S"
    bare = {"messages": [{"role": "user", "content": "go"}]}
    set_system(bare, "openai", "S")
    assert bare["messages"][0] == {"role": "system", "content": "S"}

    redact_results(a, "anthropic", {"t1"}, "[gone]")
    redact_results(c, "openai", {"c1"}, "[gone]")
    redact_results(r, "responses", {"f1", "zz"}, "[gone]")
    assert a["messages"][2]["content"][0]["content"] == "[gone]"
    assert c["messages"][3]["content"] == "[gone]" and r["input"][2]["output"] == "[gone]"

    edit = Edit(model="M", temperature=0.5, max_tokens=7)
    c["max_completion_tokens"] = 100
    for req, dialect in ((a, "anthropic"), (c, "openai"), (r, "responses")):
        set_sampling(req, dialect, edit)
        assert req["model"] == "M" and req["temperature"] == 0.5
    assert a["max_tokens"] == 7 and c["max_completion_tokens"] == 7
    assert r["max_output_tokens"] == 7 and "max_tokens" not in c


def test_snapshot_items_have_the_harness_item_shape() -> None:
    chat = copy.deepcopy(CHAT)
    merge_note(chat, "openai", "N")
    items = snapshot_items(chat, "openai", "N")
    assert [(i["role"], i["source"]) for i in items] == [
        ("user", "episode"),
        ("assistant", "assistant"),
        ("tool", "tool"),
        ("user", "fork-edit"),
    ]
    assert items[1]["tool_calls"] == [{"id": "c1", "name": "a", "input": {"x": 1}}]
    assert items[2]["tool_call_id"] == "c1" and items[2]["name"] == "a"
    assert list(items[0]) == [
        "role",
        "content",
        "source",
        "pinned",
        "tokens",
        "tool_calls",
        "tool_call_id",
        "name",
    ]
