"""Tool-using agent loops run by the real SDK clients, traced by real instrumentations.

Each loop runs against the fake upstream and returns what the producer side knows -- the
requests the upstream received, the tool calls the agent executed, the usage it was sent
-- so the tests compare the OTLP reader's run against facts, not against its own reading.
The agent itself traces its tool executions (as applications do by hand): an OpenInference
TOOL span or an OTel GenAI ``execute_tool`` span, except for the calls listed in
``untraced`` (their results reach the trace only through the next call's input).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import openai
from openai.types.chat import ChatCompletion
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider

from tests.core.clis import ROOT
from tests.core.formats.otlp_producers import instrumented, instrumented_globally
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, OPENAI_KEY, running_upstream

SYSTEM = "You are a careful travel agent."
PROMPT = "Find me a hotel in Zürich and one in Bern"
SCRIPT = (
    Reply(
        calls=[("call_a", "search", {"city": "Zürich"}), ("call_b", "search", {"city": "Bern"})],
        usage=(80, 20),
    ),
    Reply(calls=[("call_c", "book", {"hotel": "Storchen"})], usage=(130, 15)),
    Reply(text="Booked Hotel Storchen ✓", usage=(170, 9)),
)
RESULTS = {"call_a": "Storchen, Widder", "call_b": "Schweizerhof", "call_c": "booking #42"}
CHAT_TOOLS = [
    {
        "type": "function",
        "function": {"name": n, "parameters": {"type": "object", "properties": {}}},
    }
    for n in ("search", "book")
]
ANTHROPIC_TOOLS = [
    {"name": n, "input_schema": {"type": "object", "properties": {}}} for n in ("search", "book")
]


@dataclass
class Recorded:
    """What the producer side knows about one agent run."""

    spans: list[ReadableSpan]
    requests: list[dict[str, Any]]  # request bodies the upstream received
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (id, name) executed
    usage: list[tuple[int, int]] = field(default_factory=list)
    output: str = ""  # the agent's final answer, as the agent framework returned it

    @property
    def tokens(self) -> tuple[int, int]:
        return sum(u[0] for u in self.usage), sum(u[1] for u in self.usage)


@contextmanager
def _upstream() -> Iterator[FakeUpstream]:
    with running_upstream() as up:
        up.script(*SCRIPT)
        yield up


def _tool_span(provider: TracerProvider, style: str, call_id: str, name: str, args: Any) -> Any:
    tracer = provider.get_tracer("loom-tests.agent")
    if style == "openinference":
        attrs = {
            "openinference.span.kind": "TOOL",
            "tool.name": name,
            "tool_call.id": call_id,
            "input.value": json.dumps(args),
            "output.value": RESULTS[call_id],
        }
    else:  # OTel GenAI execute_tool span
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.call.arguments": json.dumps(args),
            "gen_ai.tool.call.result": RESULTS[call_id],
        }
    return tracer.start_as_current_span(f"execute_tool {name}", attributes=attrs)


def _agent_span(provider: TracerProvider, style: str, name: str) -> Any:
    tracer = provider.get_tracer("loom-tests.agent")
    if style == "openinference":
        attrs = {"openinference.span.kind": "AGENT", "agent.name": name}
    else:
        attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return tracer.start_as_current_span(f"invoke_agent {name}", attributes=attrs)


def run_agent(
    instrumentation: str,
    untraced: tuple[str, ...] = ("call_b",),
    root: bool = True,
    stream: bool = False,
    also: tuple[str, ...] = (),
) -> Recorded:
    """The scripted 3-call agent with ``instrumentation`` (e.g. ``openinference-openai``);
    ``root``: inside an agent span (else every model call is its own trace); ``stream``:
    the OpenAI client streams each reply (usage in the last chunk); ``also``: more
    instrumentations on the same client, all on a GLOBAL tracer provider (so with the
    Anthropic SDK's own spans: call it in a fresh interpreter, :func:`run_agent_fresh`)."""
    style = instrumentation.split("-")[0]
    setup = (
        instrumented_globally((instrumentation, *also))
        if also or instrumentation == "anthropic-sdk"
        else instrumented(instrumentation)
    )
    with setup as (provider, exporter), _upstream() as up:
        rec = Recorded([], [])
        loop = _openai_loop if instrumentation.endswith("openai") else _anthropic_loop
        if root:
            with _agent_span(provider, style, "travel"):
                loop(up.url, provider, style, untraced, rec, stream)
        else:
            loop(up.url, provider, style, untraced, rec, stream)
        rec.spans = list(exporter.get_finished_spans())
        rec.requests = [s.body for s in up.seen]
    return rec


def _execute(
    provider: TracerProvider, style: str, untraced: tuple[str, ...], rec: Recorded, call: Any
) -> str:
    call_id, name, args = call
    rec.tool_calls.append((call_id, name))
    if call_id in untraced:
        return RESULTS[call_id]
    with _tool_span(provider, style, call_id, name, args):
        return RESULTS[call_id]


def _openai_loop(
    url: str,
    provider: TracerProvider,
    style: str,
    untraced: tuple[str, ...],
    rec: Recorded,
    stream: bool,
) -> None:
    client = openai.OpenAI(base_url=url + "/v1", api_key=OPENAI_KEY, max_retries=0, timeout=10)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": PROMPT},
    ]
    for _ in range(len(SCRIPT)):
        done = _complete(client, messages, stream)
        assert done.usage is not None
        rec.usage.append((done.usage.prompt_tokens, done.usage.completion_tokens))
        msg = done.choices[0].message
        calls = [
            (c.id, c.function.name, json.loads(c.function.arguments))  # type: ignore[union-attr]
            for c in msg.tool_calls or []
        ]
        if not calls:
            return
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [c.model_dump() for c in msg.tool_calls or []],
            }
        )
        for call in calls:
            result = _execute(provider, style, untraced, rec, call)
            messages.append({"role": "tool", "tool_call_id": call[0], "content": result})
    raise AssertionError("agent did not finish")


def _complete(client: openai.OpenAI, messages: list[dict[str, Any]], stream: bool) -> Any:
    """One chat completion, whole or streamed (the chunks assembled as an agent does)."""
    if not stream:
        return client.chat.completions.create(model="gpt-4o", messages=messages, tools=CHAT_TOOLS)  # type: ignore[arg-type]
    chunks = client.chat.completions.create(
        model="gpt-4o",
        messages=messages,  # type: ignore[arg-type]
        tools=CHAT_TOOLS,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    text, calls, usage = "", {}, None
    for chunk in chunks:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for tc in choice.delta.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                slot["id"] = tc.id or slot["id"]
                slot["name"] = (tc.function.name if tc.function else "") or slot["name"]
                slot["arguments"] += (tc.function.arguments if tc.function else "") or ""
    tool_calls = [
        {
            "id": c["id"],
            "type": "function",
            "function": {"name": c["name"], "arguments": c["arguments"]},
        }
        for _, c in sorted(calls.items())
    ]
    message = {"role": "assistant", "content": text or None, "tool_calls": tool_calls or None}
    return ChatCompletion.model_validate(
        {
            "id": "streamed",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage.model_dump() if usage else None,
        }
    )


def _anthropic_loop(
    url: str,
    provider: TracerProvider,
    style: str,
    untraced: tuple[str, ...],
    rec: Recorded,
    stream: bool,
) -> None:
    del stream  # the Anthropic loop asks for whole replies only
    client = anthropic.Anthropic(base_url=url, api_key=ANTHROPIC_KEY, max_retries=0, timeout=10)
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    for _ in range(len(SCRIPT)):
        message = client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=256,
            system=SYSTEM,
            messages=messages,  # type: ignore[arg-type]
            tools=ANTHROPIC_TOOLS,  # type: ignore[arg-type]
        )
        rec.usage.append((message.usage.input_tokens, message.usage.output_tokens))
        uses = [b for b in message.content if b.type == "tool_use"]
        if not uses:
            return
        messages.append(
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in message.content],
            }
        )
        results = [_execute(provider, style, untraced, rec, (b.id, b.name, b.input)) for b in uses]
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": b.id, "content": r}
                    for b, r in zip(uses, results, strict=True)
                ],
            }
        )
    raise AssertionError("agent did not finish")


def sent(body: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...], str]]:
    """A request as the provider received it: (role, text, tool-call ids, tool-call id)
    per message, Anthropic tool results split into one ``tool`` message each."""
    out: list[tuple[str, str, tuple[str, ...], str]] = []
    if isinstance(body.get("system"), str):
        out.append(("system", body["system"], (), ""))
    for msg in body["messages"]:
        content = msg.get("content")
        if isinstance(content, list):
            results = [b for b in content if b.get("type") == "tool_result"]
            for b in results:
                out.append(("tool", b["content"], (), b["tool_use_id"]))
            if results:
                continue
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            ids = tuple(b["id"] for b in content if b.get("type") == "tool_use")
            out.append((msg["role"], text, ids, ""))
        else:
            ids = tuple(c["id"] for c in msg.get("tool_calls") or [])
            out.append((msg["role"], content or "", ids, msg.get("tool_call_id", "")))
    return out


def seen_by_reader(messages: list[dict[str, Any]]) -> list[tuple[str, str, tuple[str, ...], str]]:
    """The reader's ``extra["inputs"]`` messages in the projection of :func:`sent`."""
    from loom_core.formats.otlp_messages import text_of

    return [
        (
            m["role"],
            text_of(m["content"]),
            tuple(c["id"] for c in m.get("tool_calls", [])),
            m.get("tool_call_id", ""),
        )
        for m in messages
    ]


def run_agent_fresh(
    instrumentation: str,
    path: Path,
    stream: bool = False,
    also: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Recorded:
    """:func:`run_agent` in a new interpreter, its spans written to ``path`` (protobuf);
    ``env``: more environment for it (e.g. the Anthropic SDK's content switch).

    Why: OpenLLMetry's ``uninstrument`` leaves its stream wrapper in place, so after a
    second ``instrument`` in one process each streamed chunk is recorded twice (the span
    then says "Booked HBooked Hotel…"); and the global tracer provider can be set once. A
    fresh process instruments once, as an app does.
    """
    spec = {"instrumentation": instrumentation, "path": str(path), "stream": stream}
    facts = path.with_name(path.name + ".facts.json")
    return in_child(
        "tests.core.formats.otlp_agents:_fresh", {**spec, "also": list(also)}, facts, env
    )


def in_child(
    target: str, spec: dict[str, Any], facts: Path, env: dict[str, str] | None = None
) -> Recorded:
    """``module:function`` called with ``spec`` (as JSON) in a fresh interpreter, which
    writes the producer's facts to ``facts``; they are returned (``env``: more
    environment for the child)."""
    module, function = target.split(":")
    code = f"import sys; from {module} import {function}; {function}(sys.argv[1])"
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(spec)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    known = json.loads(facts.read_text())
    return Recorded(
        [],
        known["requests"],
        [tuple(t) for t in known["tool_calls"]],
        [tuple(u) for u in known["usage"]],
        known.get("output", ""),
    )


def _fresh(args: str) -> None:
    """The child of :func:`run_agent_fresh`."""
    from tests.core.formats.otlp_producers import write_pb

    spec = json.loads(args)
    rec = run_agent(spec["instrumentation"], stream=spec["stream"], also=tuple(spec["also"]))
    path = Path(spec["path"])
    write_pb(path, rec.spans)
    facts = {"requests": rec.requests, "tool_calls": rec.tool_calls, "usage": rec.usage}
    path.with_name(path.name + ".facts.json").write_text(json.dumps(facts))
