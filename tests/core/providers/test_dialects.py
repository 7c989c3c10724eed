"""Each SDK provider against the fake API: replies, and what goes over the wire."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loom_core.providers.base import ModelReply, ToolSpec
from tests.core.providers.rig import DIALECTS, PATHS, Upstream, request
from tests.core.proxy.fake_wire import Reply

CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "Book a hotel in Zürich", "source": "episode"},
    {
        "role": "assistant",
        "content": "Searching two cities.",
        "tool_calls": [
            {"id": "call_a", "name": "search_hotels", "input": {"city": "Zürich"}},
            {"id": "call_b", "name": "search_hotels", "input": {"city": "Bern"}},
        ],
    },
    {
        "role": "tool",
        "content": "Hotel Storchen",
        "tool_call_id": "call_a",
        "name": "search_hotels",
    },
    {
        "role": "tool",
        "content": {"hotels": ["Bellevue"]},
        "tool_call_id": "call_b",
        "name": "search_hotels",
    },
    {"role": "user", "content": "Prefer the cheaper one.", "source": "fork-edit"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "call_c", "name": "book", "input": {"hotel": "Storchen"}}],
    },
    {"role": "tool", "content": "booked #42", "tool_call_id": "call_c", "name": "book"},
]
TOOLS = [
    ToolSpec(
        "search_hotels",
        "Find hotels",
        {"type": "object", "properties": {"city": {"type": "string"}}},
    ),
    ToolSpec("book", "", {"type": "object", "properties": {}}),
]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
@pytest.mark.parametrize("name", DIALECTS)
def test_text_reply(upstream: Upstream, name: str, stream: bool) -> None:
    upstream.fake.script(Reply(text="Hotel Storchen is free ✓", usage=(120, 9)))
    reply = upstream.provider(name, stream=stream).complete(request())
    assert reply == ModelReply(
        "Hotel Storchen is free ✓",
        [],
        "end_turn",
        {"input_tokens": 120, "output_tokens": 9},
        model="fake-model",
    )
    seen = upstream.seen[0]
    assert seen.path == PATHS[name]
    assert bool(seen.body.get("stream")) is stream


@pytest.mark.parametrize("name", DIALECTS)
def test_tool_call_reply(upstream: Upstream, name: str) -> None:
    upstream.fake.script(
        Reply(
            text="Let me look.",
            calls=[
                ("call_1", "search_hotels", {"city": "Zürich", "stars": [4, 5]}),
                ("call_2", "search_hotels", {"city": "Bern"}),
            ],
            usage=(80, 20),
        )
    )
    reply = upstream.provider(name).complete(request())
    assert reply.text == "Let me look."
    assert reply.tool_calls == [
        {"id": "call_1", "name": "search_hotels", "input": {"city": "Zürich", "stars": [4, 5]}},
        {"id": "call_2", "name": "search_hotels", "input": {"city": "Bern"}},
    ]
    assert reply.stop_reason == "tool_use"
    assert reply.usage == {"input_tokens": 80, "output_tokens": 20}
    assert set(reply.result()) == {"text", "tool_calls", "stop_reason", "usage"}


@pytest.mark.parametrize("name", DIALECTS)
def test_streamed_and_plain_replies_are_identical(upstream: Upstream, name: str) -> None:
    turn = Reply(
        text="Two options, one call.", calls=[("call_9", "book", {"hotel": "Ä"})], usage=(300, 41)
    )
    upstream.fake.script(turn, turn)
    streamed = upstream.provider(name, stream=True).complete(request())
    plain = upstream.provider(name, stream=False).complete(request())
    assert streamed == plain
    assert streamed.tool_calls == [{"id": "call_9", "name": "book", "input": {"hotel": "Ä"}}]
    assert [bool(s.body.get("stream")) for s in upstream.seen] == [True, False]


def _sent(upstream: Upstream, name: str, **opts: Any) -> dict[str, Any]:
    upstream.fake.script(Reply(text="ok"))
    upstream.provider(name, **opts).complete(
        request(messages=CONVERSATION, tools=TOOLS, max_tokens=333, temperature=0.25)
    )
    return upstream.seen[-1].body


def test_anthropic_request_shape(upstream: Upstream) -> None:
    body = _sent(upstream, "anthropic")
    assert body["system"] == "You are a travel agent."
    assert body["model"] == "fake-model" and body["max_tokens"] == 333
    assert body["temperature"] == 0.25
    assert body["tools"] == [
        {"name": "search_hotels", "description": "Find hotels", "input_schema": TOOLS[0].schema},
        {"name": "book", "input_schema": {"type": "object", "properties": {}}},
    ]
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert msgs[0]["content"] == "Book a hotel in Zürich"
    assert msgs[1]["content"] == [
        {"type": "text", "text": "Searching two cities."},
        {"type": "tool_use", "id": "call_a", "name": "search_hotels", "input": {"city": "Zürich"}},
        {"type": "tool_use", "id": "call_b", "name": "search_hotels", "input": {"city": "Bern"}},
    ]
    # both tool results and the fork's note merged into one user turn, results first
    assert msgs[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_a", "content": "Hotel Storchen"},
        {
            "type": "tool_result",
            "tool_use_id": "call_b",
            "content": json.dumps({"hotels": ["Bellevue"]}, ensure_ascii=False),
        },
        {"type": "text", "text": "Prefer the cheaper one."},
    ]
    assert msgs[3]["content"] == [
        {"type": "tool_use", "id": "call_c", "name": "book", "input": {"hotel": "Storchen"}}
    ]
    assert msgs[4]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_c", "content": "booked #42"}
    ]


def test_chat_request_shape(upstream: Upstream) -> None:
    body = _sent(upstream, "openai")
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
        "tool",
    ]
    assert msgs[0]["content"] == "You are a travel agent."
    assert msgs[2]["content"] == "Searching two cities."
    assert [
        (c["id"], c["type"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in msgs[2]["tool_calls"]
    ] == [
        ("call_a", "function", "search_hotels", {"city": "Zürich"}),
        ("call_b", "function", "search_hotels", {"city": "Bern"}),
    ]
    assert [(m["tool_call_id"], m["content"]) for m in msgs if m["role"] == "tool"] == [
        ("call_a", "Hotel Storchen"),
        ("call_b", '{"hotels": ["Bellevue"]}'),
        ("call_c", "booked #42"),
    ]
    assert msgs[6]["content"] is None and msgs[6]["tool_calls"][0]["id"] == "call_c"
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "search_hotels",
                "description": "Find hotels",
                "parameters": TOOLS[0].schema,
            },
        },
        {"type": "function", "function": {"name": "book", "parameters": TOOLS[1].schema}},
    ]
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 333 and body["temperature"] == 0.25  # base_url: compatible server


def test_chat_official_api_gets_max_completion_tokens(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_core.providers import make_provider
    from loom_core.providers.openai_provider import OpenAIChatProvider

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    official = make_provider("openai")
    assert isinstance(official, OpenAIChatProvider)
    assert official.token_param == "max_completion_tokens"
    body = _sent(upstream, "openai", token_param="max_completion_tokens")
    assert body["max_completion_tokens"] == 333 and "max_tokens" not in body


def test_responses_request_shape(upstream: Upstream) -> None:
    body = _sent(upstream, "openai-responses")
    assert body["instructions"] == "You are a travel agent."
    assert body["max_output_tokens"] == 333
    assert body["input"] == [
        {"role": "user", "content": "Book a hotel in Zürich"},
        {"role": "assistant", "content": "Searching two cities."},
        {
            "type": "function_call",
            "call_id": "call_a",
            "name": "search_hotels",
            "arguments": json.dumps({"city": "Zürich"}),
        },
        {
            "type": "function_call",
            "call_id": "call_b",
            "name": "search_hotels",
            "arguments": json.dumps({"city": "Bern"}),
        },
        {"type": "function_call_output", "call_id": "call_a", "output": "Hotel Storchen"},
        {"type": "function_call_output", "call_id": "call_b", "output": '{"hotels": ["Bellevue"]}'},
        {"role": "user", "content": "Prefer the cheaper one."},
        {
            "type": "function_call",
            "call_id": "call_c",
            "name": "book",
            "arguments": json.dumps({"hotel": "Storchen"}),
        },
        {"type": "function_call_output", "call_id": "call_c", "output": "booked #42"},
    ]
    assert body["tools"][0] == {
        "type": "function",
        "name": "search_hotels",
        "description": "Find hotels",
        "parameters": TOOLS[0].schema,
        "strict": False,
    }


def test_model_choice(upstream: Upstream) -> None:
    """The user's pick wins over the request's model; the request's over the default."""
    upstream.fake.script(Reply(text="a"), Reply(text="b"))
    picked = upstream.provider("anthropic")
    picked.complete(request(model="recorded-model"))
    unpicked = upstream.provider("anthropic")
    unpicked.model = ""
    unpicked.complete(request(model="recorded-model"))
    assert [s.body["model"] for s in upstream.seen] == ["fake-model", "recorded-model"]
