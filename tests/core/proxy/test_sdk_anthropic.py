"""The real ``anthropic`` SDK through our proxy: an agent loop with tools, JSON and SSE.

Why the real client: it is what agents run; it checks every byte we relay (SSE
framing, ``ping`` events, headers) the way production does. Each trace must be
accepted by loom-harness and equal to what its own recorder makes of the same
exchanges, and each recorded response must be what the client received.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from loom_core.formats.loader import load
from loom_core.live.follow import JournalFollower
from tests.core.clis import core
from tests.core.proxy.checks import anthropic_seen, anthropic_wire, stop_and_check
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, Rig, loom_accepts, model_results

SYSTEM = "You are a weather bot. build_id=2026.07.1"
TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    {
        "name": "get_time",
        "description": "Time in a zone.",
        "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}},
    },
]
RESULTS = {"toolu_01": "18°C, sunny ☀", "toolu_02": "22°C", "toolu_03": "09:15 JST"}


def script(rig: Rig) -> None:
    rig.upstream.script(
        Reply(text="Let me check.", calls=[("toolu_01", "get_weather", {"city": "Paris"})]),
        Reply(
            calls=[
                ("toolu_02", "get_weather", {"city": "東京"}),
                ("toolu_03", "get_time", {"tz": "Asia/Tokyo"}),
            ],
            usage=(40, 12),
        ),
        Reply(text="Paris: 18°C. Tokyo: 22°C at 09:15.", usage=(80, 15)),
    )


def agent(rig: Rig, stream: bool) -> list[Any]:
    """A minimal tool loop: call, run the requested tools, send results, until done."""
    client = rig.anthropic()
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>cwd is /tmp</system-reminder>"},
                {"type": "text", "text": "Weather in Paris and Tokyo?"},
            ],
        }
    ]
    seen = []
    for _ in range(5):  # bounded: the script has three turns
        kwargs = dict(
            model="claude-test", max_tokens=256, system=SYSTEM, tools=TOOLS, messages=messages
        )
        if stream:
            with client.messages.stream(**kwargs) as s:
                for _event in s:
                    pass
                message = s.get_final_message()
        else:
            message = client.messages.create(**kwargs)
        seen.append(message)
        calls = [b for b in message.content if b.type == "tool_use"]
        if not calls:
            return seen
        messages.append(
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in message.content],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": c.id, "content": RESULTS[c.id]}
                    for c in calls
                ],
            }
        )
    raise AssertionError("agent did not finish")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_agent_loop_is_recorded_as_loom_would(rig: Rig, stream: bool) -> None:
    script(rig)
    seen = agent(rig, stream)
    trace = stop_and_check(rig)
    assert [anthropic_wire(w) for w in trace["wire"]] == [anthropic_seen(m) for m in seen]
    assert [e["kind"] for e in trace["log"]] == [
        "model",
        "tool:get_weather",
        "model",
        "tool:get_weather",
        "tool:get_time",
        "model",
    ]
    assert [e["result"] for e in trace["log"] if e["kind"].startswith("tool:")] == list(
        RESULTS.values()
    )
    assert trace["episodes"] == ["Weather in Paris and Tokyo?"]
    assert trace["systems"] == {"ae00f1483656": SYSTEM}
    assert trace["output"] == "Paris: 18°C. Tokyo: 22°C at 09:15."
    usage = [r["usage"] for r in model_results(trace)]
    assert usage == [
        {"input_tokens": 11, "output_tokens": 7},
        {"input_tokens": 40, "output_tokens": 12},
        {"input_tokens": 80, "output_tokens": 15},
    ]
    assert all(
        ANTHROPIC_KEY in s.headers.get("x-api-key", "") + s.headers.get("authorization", "")
        for s in rig.upstream.seen
    )  # forwarded (newer SDKs send it as a bearer token)
    assert all("anthropic-version" in s.headers for s in rig.upstream.seen)


def test_journal_is_tailable_and_converts(rig: Rig, tmp_path: Any) -> None:
    journal = tmp_path / "session.journal.jsonl"
    follower = JournalFollower(journal)  # what the desktop's live tab uses
    first = follower.read()
    assert first is None or (first.header is None and not first.new_effects)
    script(rig)
    rig.upstream.script(Reply(text="one more"))
    agent(rig, stream=True)
    grown = follower.read()
    assert grown is not None and not grown.rewritten and grown.error is None
    assert grown.header is not None and grown.header["episodes"] == ["Weather in Paris and Tokyo?"]
    assert [e.kind for e in grown.new_effects] == [
        "model",
        "tool:get_weather",
        "model",
        "tool:get_weather",
        "tool:get_time",
        "model",
    ]
    rig.anthropic().messages.create(
        model="claude-test", max_tokens=9, messages=[{"role": "user", "content": "and Rome?"}]
    )
    more = follower.read()  # appended, never rewritten: the tail just continues
    assert (
        more is not None and not more.rewritten and [e.kind for e in more.new_effects] == ["model"]
    )
    assert more.header is not None and more.header["episodes"][-1] == "and Rome?"  # amended
    live = load(journal)  # read while the proxy still runs
    assert live.format == "journal" and not live.torn and len(live.effects) == 7
    trace = rig.stop()
    out = tmp_path / "from-journal.loom.json"
    done = core("convert", journal, "-o", out)
    assert done.returncode == 0, done.stderr
    converted = json.loads(out.read_text())
    assert converted["log"] == trace["log"]
    assert converted["episodes"] == trace["episodes"]  # the later prompt too
    loom_accepts(out)


def test_count_tokens_and_get_pass_through_unrecorded(rig: Rig) -> None:
    rig.upstream.script(Reply(text="hi"))
    client = rig.anthropic()
    counted = client.messages.count_tokens(
        model="claude-test", messages=[{"role": "user", "content": "hi"}]
    )
    assert counted.input_tokens == 42
    client.messages.create(
        model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    )
    listed = client.with_raw_response.models.list()
    assert listed.headers.get("x-fake") == "models"
    trace = rig.stop()
    assert len(trace["wire"]) == 1 and [e["kind"] for e in trace["log"]] == ["model"]


def test_loom_paths_are_never_forwarded(rig: Rig) -> None:
    import aiohttp

    async def probe() -> list[tuple[int, str]]:
        async with aiohttp.ClientSession() as s:
            out = []
            for method, path in (
                ("GET", "/loom/shield/pending"),
                ("POST", "/loom/shield/decide"),
                ("POST", "/loom/anything"),
                ("GET", "/loom/proxy"),
            ):
                async with s.request(method, rig.url + path, json={}) as r:
                    out.append((r.status, await r.text()))
            return out

    pending, decide, other, status = rig.lt.run(probe())
    assert pending[0] == decide[0] == 404 and "no shield active on this proxy" in pending[1]
    assert other[0] == 404 and rig.upstream.seen == []
    assert status[0] == 200 and json.loads(status[1])["exchanges"] == 0
