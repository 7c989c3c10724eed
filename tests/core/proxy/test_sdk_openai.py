"""The real ``openai`` SDK through our proxy: Chat Completions and the Responses API.

Chat Completions traces must equal loom-harness's own recording of the same
exchanges. The Responses API is where we go further than loom-harness (which
records it empty, §13.7): text, function calls paired by ``call_id`` with the
``function_call_output`` items of the next request, usage and episodes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from loom_core.formats.canonical import proxy_tool_key
from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from tests.core.proxy.checks import model_requests, sidecar_requests_exact, stop_and_check
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import OPENAI_KEY, Rig, loom_accepts, model_results

CHAT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_hotels",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
RESP_TOOLS = [
    {
        "type": "function",
        "name": "search_hotels",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def two_turns(rig: Rig) -> None:
    rig.upstream.script(
        Reply(
            calls=[
                ("call_a", "search_hotels", {"city": "Zürich"}),
                ("call_b", "search_hotels", {"city": "Bern"}),
            ],
            usage=(80, 20),
        ),
        Reply(text="Booked Hotel Storchen ✓", usage=(130, 12)),
    )


def chat_agent(rig: Rig, stream: bool) -> list[dict[str, Any]]:
    """Returns each turn as the client assembled it: {text, calls, usage}."""
    client = rig.openai()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful travel agent."},
        {"role": "user", "content": "Book a hotel in Zürich"},
    ]
    turns = []
    for _ in range(4):
        if stream:
            text, calls, usage = "", {}, None
            for chunk in client.chat.completions.create(
                model="gpt-test",
                messages=messages,
                tools=CHAT_TOOLS,
                stream=True,
                stream_options={"include_usage": True},
            ):
                usage = chunk.usage or usage
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    for tc in choice.delta.tool_calls or []:
                        slot = calls.setdefault(tc.index, {"id": "", "name": "", "args": ""})
                        slot["id"] = tc.id or slot["id"]
                        slot["name"] = (tc.function.name if tc.function else "") or slot["name"]
                        slot["args"] += (tc.function.arguments if tc.function else "") or ""
            call_list = [calls[i] for i in sorted(calls)]
        else:
            done = client.chat.completions.create(
                model="gpt-test", messages=messages, tools=CHAT_TOOLS
            )
            msg, usage = done.choices[0].message, done.usage
            text = msg.content or ""
            call_list = [
                {"id": c.id, "name": c.function.name, "args": c.function.arguments}
                for c in msg.tool_calls or []
            ]
        assert usage is not None
        turns.append(
            {
                "text": text,
                "calls": [(c["id"], c["name"], json.loads(c["args"])) for c in call_list],
                "usage": (usage.prompt_tokens, usage.completion_tokens),
            }
        )
        if not call_list:
            return turns
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["args"]},
                    }
                    for c in call_list
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": c["id"], "content": f"hotel in {c['id']}"}
            for c in call_list
        ]
    raise AssertionError("agent did not finish")


def recorded_turns(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "text": r["text"],
            "calls": [(c["id"], c["name"], c["input"]) for c in r["tool_calls"]],
            "usage": (r["usage"]["input_tokens"], r["usage"]["output_tokens"]),
        }
        for r in model_results(trace)
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_chat_completions_loop(rig: Rig, stream: bool) -> None:
    two_turns(rig)
    turns = chat_agent(rig, stream)
    trace = stop_and_check(rig)
    assert recorded_turns(trace) == turns
    assert [e["kind"] for e in trace["log"]] == [
        "model",
        "tool:search_hotels",
        "tool:search_hotels",
        "model",
    ]
    assert trace["system"] == "You are a helpful travel agent."
    assert trace["episodes"] == ["Book a hotel in Zürich"]
    assert all(s.headers["authorization"] == f"Bearer {OPENAI_KEY}" for s in rig.upstream.seen)
    if stream:
        assert trace["wire"][0]["id"] == "chatcmpl-0000"  # kept, unlike loom-harness


def responses_agent(rig: Rig, stream: bool) -> list[dict[str, Any]]:
    client = rig.openai()
    items: list[Any] = [
        {"role": "user", "content": [{"type": "input_text", "text": "Book a hotel in Zürich"}]}
    ]
    turns = []
    for _ in range(4):
        kwargs = dict(
            model="gpt-test",
            instructions="You are a helpful travel agent.",
            input=items,
            tools=RESP_TOOLS,
        )
        if stream:
            with client.responses.stream(**kwargs) as s:
                for _event in s:
                    pass
                response = s.get_final_response()
        else:
            response = client.responses.create(**kwargs)
        calls = [o for o in response.output if o.type == "function_call"]
        turns.append(
            {
                "text": response.output_text,
                "calls": [(c.call_id, c.name, json.loads(c.arguments)) for c in calls],
                "usage": (response.usage.input_tokens, response.usage.output_tokens),
            }
        )
        if not calls:
            return turns
        items += [o.model_dump(exclude_none=True) for o in response.output]
        items += [
            {
                "type": "function_call_output",
                "call_id": c.call_id,
                "output": f"hotel in {c.call_id}",
            }
            for c in calls
        ]
    raise AssertionError("agent did not finish")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_responses_api_is_recorded(rig: Rig, stream: bool) -> None:
    two_turns(rig)
    turns = responses_agent(rig, stream)
    trace = rig.stop()
    loom_accepts(rig.save)
    sidecar_requests_exact(rig.save, model_requests(rig.upstream))
    assert recorded_turns(trace) == turns
    log = trace["log"]
    assert [e["kind"] for e in log] == [
        "model",
        "tool:search_hotels",
        "tool:search_hotels",
        "model",
    ]
    assert [(e["result"], e["meta"]["tuid"], e["key"]) for e in log[1:3]] == [
        ("hotel in call_a", "call_a", proxy_tool_key("tool:search_hotels", "call_a")),
        ("hotel in call_b", "call_b", proxy_tool_key("tool:search_hotels", "call_b")),
    ]
    assert log[0]["meta"]["tools"] == ["search_hotels"] and log[3]["meta"]["msgs"] == 5
    assert trace["episodes"] == ["Book a hotel in Zürich"]
    assert trace["system"] == "You are a helpful travel agent."
    assert trace["output"] == "Booked Hotel Storchen ✓"
    assert trace["wire"][1]["object"] == "response" and trace["wire"][1]["status"] == "completed"
    doc = load(rig.save)  # our own reader: the timeline pairs calls and results
    tl = build_timeline(doc)
    assert (tl.input_tokens, tl.output_tokens) == (210, 32)
    assert tl.call_of[tl.step_of_effect[1]] == tl.step_of_effect[0]


def test_responses_string_input_and_wrapped_context(rig: Rig) -> None:
    rig.upstream.script(Reply(text="hi"), Reply(text="ok"))
    client = rig.openai()
    client.responses.create(model="gpt-test", input="Say hi")
    client.responses.create(
        model="gpt-test",
        input=[
            {"role": "user", "content": "<environment_context>cwd=/x</environment_context>"},
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "input_text", "text": "Now say ok"}]},
        ],
    )
    trace = rig.stop()
    assert trace["episodes"] == ["Say hi", "Now say ok"]
    assert trace["system"] == "Be brief." and trace["output"] == "ok"
