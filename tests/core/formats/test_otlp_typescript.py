"""Agents written in TypeScript: the files the real npm producers write read as the calls made.

Producers (exact versions in tests/ts_producers/package-lock.json): the Vercel AI SDK 6
(``experimental_telemetry``, its own ``ai.*`` spans), AI SDK 7 with ``@ai-sdk/otel``'s
``OpenTelemetry`` (GenAI spans) and ``LegacyOpenTelemetry`` (the ``ai.*`` spans again), and
OpenLLMetry-JS (``@traceloop/node-server-sdk``), which renames the AI SDK's spans to
``chat <model>`` -- the run's outer span too -- as it exports them. Each runs the same
three-call agent (two parallel searches, a booking, an answer) against the fake upstream,
generating or streaming, and exports to our receiver. Facts checked: model steps = requests
the upstream received = the SDK's steps; tool steps = tools the SDK executed, with their
arguments and results; tokens = what the upstream billed = the SDK's per-step and total
usage (the outer span's totals not added again); each call's input = the messages the
upstream received; the run's output = the SDK's final text.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from loom_core.formats.loader import load
from loom_core.views.run_cost import token_usage
from loom_core.views.summary import summarize
from tests.core.formats import ts_producers as ts
from tests.core.formats.otlp_agents import PROMPT, RESULTS, SCRIPT, SYSTEM, seen_by_reader, sent
from tests.core.proxy.fake_wire import Reply

pytestmark = [
    pytest.mark.xdist_group("ts_producers"),  # one npm install, one Node at a time
    pytest.mark.timeout(ts.INSTALL_TIMEOUT + 300),  # the first test's set-up runs npm ci
]

CASES = [
    pytest.param({"sdk": "ai6", "provider": "openai", "mode": "generate"}, id="ai6-openai-generate"),
    pytest.param({"sdk": "ai6", "provider": "openai", "mode": "stream"}, id="ai6-openai-stream"),
    pytest.param({"sdk": "ai6", "provider": "anthropic", "mode": "generate"}, id="ai6-anthropic-generate"),
    pytest.param({"sdk": "ai6", "provider": "anthropic", "mode": "stream"}, id="ai6-anthropic-stream"),
    pytest.param({"sdk": "ai7", "provider": "openai", "mode": "generate"}, id="ai7-openai-generate"),
    pytest.param({"sdk": "ai7", "provider": "anthropic", "mode": "stream"}, id="ai7-anthropic-stream"),
    pytest.param({"sdk": "ai7-legacy", "provider": "openai", "mode": "stream"}, id="ai7-legacy-openai-stream"),
    pytest.param({"sdk": "ai7-legacy", "provider": "anthropic", "mode": "generate"}, id="ai7-legacy-anthropic-generate"),
    pytest.param({"sdk": "ai6", "traceloop": True, "provider": "openai", "mode": "generate"}, id="traceloop-ai6-openai-generate"),
    pytest.param({"sdk": "ai6", "traceloop": True, "provider": "anthropic", "mode": "stream"}, id="traceloop-ai6-anthropic-stream"),
    pytest.param({"sdk": "ai7", "traceloop": True, "provider": "openai", "mode": "stream"}, id="traceloop-ai7-openai-stream"),
]  # fmt: skip


@pytest.fixture(scope="session")
def node() -> str:
    """Node >= 22 with the producers installed (skip, or fail on CI, when they cannot be)."""
    try:
        return ts.node()
    except ts.Unavailable as why:
        if ts.REQUIRE in os.environ:
            pytest.fail(f"{ts.REQUIRE} is set but: {why}")
        pytest.skip(str(why))


@pytest.mark.parametrize("spec", CASES)
def test_each_call_is_one_step_with_the_producers_facts(
    spec: dict[str, Any], node: str, tmp_path: Path
) -> None:
    run = ts.run_agent(spec, tmp_path / "received")
    doc = load(run.trace)
    assert doc.format == "otlp" and not doc.warnings
    kinds = [e.kind for e in doc.effects]
    models = [i for i, k in enumerate(kinds) if k == "model"]
    tools = [i for i, k in enumerate(kinds) if k != "model"]
    # one step per request the upstream answered, each tool after the call that asked for it
    assert len(models) == len(run.requests) == len(run.facts["steps"]) == len(SCRIPT)
    assert kinds == ["model", "tool:search", "tool:search", "model", "tool:book", "model"]
    executed = run.facts["executed"]
    assert [kinds[i] for i in tools] == [f"tool:{e['name']}" for e in executed]
    assert [doc.result(i) for i in tools] == [RESULTS[e["id"]] for e in executed]
    asked = [(c["id"], c["name"], c["input"]) for i in models for c in doc.result(i)["tool_calls"]]
    assert asked == [(e["id"], e["name"], e["input"]) for e in executed]
    # tokens: the upstream's bill per call = the SDK's per step; the sum = the SDK's total
    usage = [token_usage(doc.result(i)["usage"]) for i in models]
    assert [(u.input, u.output) for u in usage] == [r.usage for r in SCRIPT]
    assert [(u.input, u.output) for u in usage] == [
        (s["input"], s["output"]) for s in run.facts["steps"]
    ]
    summary = summarize(doc, "absent")
    total = run.facts["total"]
    assert (summary["input_tokens"], summary["output_tokens"]) == (total["input"], total["output"])
    # each call was sent what the upstream received; the answer is the SDK's final text
    for i, (path, body) in zip(models, run.requests, strict=True):
        assert seen_by_reader(doc.extra["inputs"][i]) == received(path, body)
    assert summary["output"] == run.facts["text"] == doc.result(models[-1])["text"]
    assert doc.episodes == [PROMPT] and doc.header.system == SYSTEM


Projected = list[tuple[str, str, tuple[str, ...], str]]


def received(path: str, body: dict[str, Any]) -> Projected:
    """The messages of a request in :func:`otlp_agents.sent`'s projection: the Anthropic
    Messages API's (system as text blocks too) or the OpenAI Responses API's input items."""
    if path.endswith("/messages"):
        system = body.get("system")
        if isinstance(system, list):
            system = "\n".join(b.get("text", "") for b in system)
        return sent({**body, "system": system})
    out: Projected = []
    for item in body["input"]:
        if item.get("type") == "function_call":
            if not out or out[-1][0] != "assistant":
                out.append(("assistant", "", (), ""))
            role, text, ids, _ = out[-1]
            out[-1] = (role, text, (*ids, item["call_id"]), "")
        elif item.get("type") == "function_call_output":
            out.append(("tool", item["output"], (), item["call_id"]))
        else:
            content = item["content"]
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content)
            out.append((item["role"], content, (), ""))
    return out


def test_the_outer_span_is_not_a_call(node: str, tmp_path: Path) -> None:
    """OpenLLMetry-JS names the run's outer span like each call (``chat gpt-4o``) and gives
    it the run's messages: it is still the run, its totals are not a fourth call's."""
    run = ts.run_agent(
        {"sdk": "ai6", "traceloop": True, "provider": "openai", "mode": "generate"},
        tmp_path / "received",
    )
    doc = load(run.trace)
    names = [n["name"] for n in doc.extra["tree"]]
    assert names.count("chat gpt-4o") == len(run.requests) + 1
    outer = next(n for n in doc.extra["tree"] if not n["parent_id"])
    assert outer["name"] == "chat gpt-4o" and outer["seq"] is None and outer["role"] == "agent"
    summary = summarize(doc, "absent")
    assert summary["input_tokens"] == run.facts["total"]["input"] == 380


@pytest.mark.parametrize("sdk", ["ai6", "ai7", "ai7-legacy"])
def test_cache_reads_and_writes_are_billed_as_the_upstream_billed_them(
    sdk: str, node: str, tmp_path: Path
) -> None:
    """Anthropic bills cache reads and writes apart from ``input_tokens``; the AI SDK counts
    them in its input total and details, and so must each step and the run's cost."""
    script = tuple(
        dataclasses.replace(r, cache=(1000 * k, 200)) for k, r in enumerate(SCRIPT, start=1)
    )
    spec = {"sdk": sdk, "provider": "anthropic", "mode": "generate"}
    run = ts.run_agent(spec, tmp_path / "received", script)
    doc = load(run.trace)
    models = [i for i, e in enumerate(doc.effects) if e.kind == "model"]
    usage = [doc.result(i)["usage"] for i in models]
    assert [u["input_tokens_details"] for u in usage] == [
        {"cached_tokens": r.cache[0], "cache_write_tokens": r.cache[1]} for r in script
    ]
    billed = [r.usage[0] + sum(r.cache) for r in script]
    assert [u["input_tokens"] for u in usage] == billed == [s["input"] for s in run.facts["steps"]]
    summary = summarize(doc, "absent")
    assert summary["input_tokens"] == run.facts["total"]["input"] == sum(billed)
    # claude-sonnet-4-5 per million: input $3, cache read $0.30, cache write $3.75, output $15
    uncached = sum(r.usage[0] for r in script)
    reads, writes = sum(r.cache[0] for r in script), sum(r.cache[1] for r in script)
    output = sum(r.usage[1] for r in script)
    dollars = (uncached * 3 + reads * 0.3 + writes * 3.75 + output * 15) / 1e6
    assert summary["cost_usd"] == pytest.approx(dollars)


SUB_CASES = [
    pytest.param({"sdk": "ai6", "mode": "stream"}, id="ai6-stream"),
    pytest.param({"sdk": "ai7", "mode": "generate"}, id="ai7-generate"),
    pytest.param({"sdk": "ai7-legacy", "mode": "generate"}, id="ai7-legacy-generate"),
    pytest.param({"sdk": "ai6", "traceloop": True, "mode": "stream"}, id="traceloop-ai6-stream"),
]


@pytest.mark.parametrize("spec", SUB_CASES)
def test_a_tool_that_runs_a_sub_agent(spec: dict[str, Any], node: str, tmp_path: Path) -> None:
    """The booking tool runs a generateText of its own: its call is one step at depth 1,
    inside the tool, and the call that asked for the booking stays a step of its own
    (streamed, the AI SDK runs the tool -- and so the sub-agent -- inside that call's span)."""
    script = (*SCRIPT[:2], Reply(text="booking #42", usage=(30, 4)), SCRIPT[2])
    full = {**spec, "provider": "openai", "subagent": True}
    run = ts.run_agent(full, tmp_path / "received", script)
    doc = load(run.trace)
    assert not doc.warnings
    steps = [(e.kind, e.depth) for e in doc.effects]
    assert steps == [
        ("model", 0),
        ("tool:search", 0),
        ("tool:search", 0),
        ("model", 0),
        ("model", 1),  # the sub-agent, asked to book
        ("tool:book", 0),  # ends when its sub-agent has answered
        ("model", 0),
    ]
    models = [i for i, (k, _) in enumerate(steps) if k == "model"]
    assert len(models) == len(run.requests) == len(script)
    for i, (path, body) in zip(models, run.requests, strict=True):
        assert seen_by_reader(doc.extra["inputs"][i]) == received(path, body)
    usage = [token_usage(doc.result(i)["usage"]) for i in models]
    assert [(u.input, u.output) for u in usage] == [r.usage for r in script]
    assert doc.result(models[2])["text"] == doc.result(5) == "booking #42"
    assert summarize(doc, "absent")["output"] == run.facts["text"]
