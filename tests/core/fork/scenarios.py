"""Parent runs to fork, recorded by the real recorders (offline).

Harness-style parents are written by loom-harness itself (its Agent loop with its
own ScriptedProvider); proxy-style parents are recorded through our proxy with the
real ``anthropic`` / ``openai`` SDK clients against the fake upstream, which also
writes the exchange sidecar the fork reads exact requests from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom import Agent, tool

from tests.core.harness_runs import call, reply, scripted
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import anthropic_agent, start_rig

# -- harness parents ---------------------------------------------------------------------

_readings: dict[str, int] = {}


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    _readings[city] = _readings.get(city, 0) + 1
    return f"{city}: reading {_readings[city]}"


def weather_run(out: Path) -> Path:
    """Three turns: Paris + Oslo, then Paris again (a second, different reading), then
    the answer. Steps: 0 model, 1-2 tools, 3 model, 4 tool, 5 model."""
    _readings.clear()
    agent = Agent(
        name="forecaster",
        system="You forecast.",
        tools=[get_weather],
        provider=scripted(
            reply(
                "Checking.",
                [call("w1", "get_weather", city="Paris"), call("w2", "get_weather", city="Oslo")],
                100,
                10,
            ),
            reply("Again.", [call("w3", "get_weather", city="Paris")], 200, 20),
            reply("Paris is mild, Oslo is cold.", [], 300, 30),
            model="claude-sonnet-4-5",
        ),
    )
    path = out / "weather.loom.json"
    agent.run("Weather in Paris and Oslo?").save(str(path))
    return path


@tool
def triple(n: int) -> int:
    """Multiply by three."""
    return n * 3


def harness_fork_pair(out: Path) -> tuple[Path, Path, Any]:
    """A parent run and loom-harness's own fork of it at turn 2 (the third model call,
    step 5) with a user note added; returns (parent, harness branch, the tool)."""
    script = [
        reply("a", [call("x1", "triple", n=1)], 10, 1),
        reply("b", [call("x2", "triple", n=2)], 11, 1),
        reply("c", [], 12, 1),
        reply("d", [call("x3", "triple", n=3)], 13, 1),
        reply("e ✓", [], 14, 1),
    ]
    agent = Agent(
        name="forker", system="You fork.", tools=[triple], clock=True, provider=scripted(*script)
    )
    run = agent.run("fork me")
    parent, branch = out / "pair-parent.loom.json", out / "pair-branch.loom.json"
    run.save(str(parent))
    run.fork(2, edit=lambda ctx: ctx.add_user("Be brief. ✓")).save(str(branch))
    return parent, branch, triple


# -- proxy parents -----------------------------------------------------------------------

SYSTEM = "You are a weather bot."
A_TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
    {
        "name": "get_time",
        "description": "Time in a zone.",
        "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}},
    },
]
CHAT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": A_TOOLS[0]["input_schema"],
        },
    }
]
RESP_TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": A_TOOLS[0]["input_schema"],
    }
]
RESULTS = {"t1": "Paris: 18°C", "t2": "Tokyo: 22°C"}
SCRIPT = [
    Reply(text="Let me check.", calls=[("t1", "get_weather", {"city": "Paris"})], usage=(120, 15)),
    Reply(calls=[("t2", "get_weather", {"city": "Tokyo"})], usage=(180, 12)),
    Reply(text="Paris 18°C, Tokyo 22°C.", usage=(240, 20)),
]


@dataclass
class ProxyParent:
    """A proxy recording: the trace, and each request the upstream received."""

    path: Path
    requests: list[dict[str, Any]]


def _anthropic_loop(rig: Any) -> None:
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>cwd is /tmp</system-reminder>"},
                {"type": "text", "text": "Weather in Paris and Tokyo?"},
            ],
        }
    ]
    anthropic_agent(
        rig.anthropic(),
        messages,
        RESULTS,
        4,
        model="claude-sonnet-4-6",
        max_tokens=300,
        system=SYSTEM,
        tools=A_TOOLS,
        extra_body={"temperature": 0.5},
    )


def _chat_loop(rig: Any) -> None:
    client = rig.openai()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Weather in Paris and Tokyo?"},
    ]
    for _ in range(4):
        msg = (
            client.chat.completions.create(
                model="gpt-4.1-mini", messages=messages, tools=CHAT_TOOLS, max_tokens=250
            )
            .choices[0]
            .message
        )
        if not msg.tool_calls:
            return
        messages.append(
            {
                "role": "assistant",
                "content": msg.content,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in msg.tool_calls
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": c.id, "content": RESULTS[c.id]} for c in msg.tool_calls
        ]
    raise AssertionError("agent did not finish")


def _responses_loop(rig: Any) -> None:
    client = rig.openai()
    items: list[Any] = [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris and Tokyo?"}]}
    ]
    for _ in range(4):
        response = client.responses.create(
            model="gpt-4.1-mini", instructions=SYSTEM, input=items, tools=RESP_TOOLS
        )
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            return
        items += [o.model_dump(exclude_none=True) for o in response.output]
        items += [
            {"type": "function_call_output", "call_id": c.call_id, "output": RESULTS[c.call_id]}
            for c in calls
        ]
    raise AssertionError("agent did not finish")


LOOPS = {"anthropic": _anthropic_loop, "openai": _chat_loop, "responses": _responses_loop}


def proxy_run(out: Path, dialect: str) -> ProxyParent:
    """Record the three-turn weather loop in ``dialect`` through our proxy (+ sidecar).
    Steps: 0 model, 1 tool, 2 model, 3 tool, 4 model."""
    out.mkdir(parents=True, exist_ok=True)
    rig = start_rig(out)
    try:
        rig.upstream.script(*SCRIPT)
        LOOPS[dialect](rig)
        rig.stop()
        requests = [s.body for s in rig.upstream.seen]
    finally:
        rig.close()
    return ProxyParent(rig.save, requests)


def trace(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())
