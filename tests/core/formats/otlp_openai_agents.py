"""The OpenAI Agents SDK (``openai-agents``) traced by OpenInference, as a real producer.

The set-up ``phoenix.otel.register(auto_instrument=True)`` makes: a global tracer provider
with OpenInference's Agents SDK instrumentation (its trace processor replaces the SDK's own
exporter, so nothing leaves the machine) and its OpenAI client instrumentation, which
reports each Responses call a second time inside the Agents SDK's ``response`` span. The
agent runs the scripted travel booking against the fake upstream, in a fresh interpreter
(the global provider is set once per process), and returns what the producer side knows.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.core.formats.otlp_agents import PROMPT, RESULTS, SCRIPT, SYSTEM, Recorded, in_child


def run_agents_sdk(path: Path, stream: bool) -> Recorded:
    """The Agents SDK run in a child interpreter; its spans written to ``path`` (protobuf)."""
    facts = path.with_name(path.name + ".facts.json")
    spec = {"path": str(path), "stream": stream}
    return in_child("tests.core.formats.otlp_openai_agents:_child", spec, facts)


def _child(args: str) -> None:
    import openai
    from agents import Agent, Runner, function_tool, set_default_openai_client

    from tests.core.formats.otlp_producers import instrumented_globally, write_pb
    from tests.core.proxy.harness import OPENAI_KEY, running_upstream

    spec = json.loads(args)
    ran: list[tuple[str, str]] = []

    @function_tool
    def search(city: str) -> str:
        """Hotels in a city."""
        ran.append(("search", city))
        return RESULTS["call_a" if city == "Zürich" else "call_b"]

    @function_tool
    def book(hotel: str) -> str:
        """Book a hotel."""
        ran.append(("book", hotel))
        return RESULTS["call_c"]

    names = ("openinference-openai-agents", "openinference-openai")
    with instrumented_globally(names) as (_, exporter), running_upstream() as up:
        up.script(*SCRIPT)

        async def main() -> Any:
            client = openai.AsyncOpenAI(base_url=up.url + "/v1", api_key=OPENAI_KEY, max_retries=0)
            set_default_openai_client(client, use_for_tracing=False)
            agent = Agent(name="travel", instructions=SYSTEM, tools=[search, book], model="gpt-4o")
            if not spec["stream"]:
                return await Runner.run(agent, PROMPT)
            result = Runner.run_streamed(agent, PROMPT)
            async for _ in result.stream_events():
                pass
            return result

        result = asyncio.run(main())
        spans = list(exporter.get_finished_spans())
        requests = [s.body for s in up.seen]
    path = Path(spec["path"])
    write_pb(path, spans)
    facts = {
        "requests": requests,
        "tool_calls": [[n, n] for n, _ in ran],
        "usage": [list(r.usage) for r in SCRIPT[: len(requests)]],
        "output": result.final_output,
    }
    path.with_name(path.name + ".facts.json").write_text(json.dumps(facts))
