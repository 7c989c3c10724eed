"""One model call reported by several instrumentations is one step (issue 22, item 1).

The normal set-up: a tracer provider set globally (as ``phoenix.otel.register()`` and
``Traceloop.init()`` do), so the Anthropic SDK's own GenAI spans (``anthropic`` 2.x, scope
``com.anthropic.sdk.python``) are written beside OpenInference's or OpenLLMetry's report of
the same call; or two instrumentation families on one client. Each run is a fresh
interpreter (the global provider is set once per process). Facts: the fake upstream's count
of calls and the tokens it billed, the tool calls the agent ran, its final answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loom_core.formats.loader import load
from loom_core.views.run_cost import token_usage
from tests.core.clis import core
from tests.core.formats.otlp_agents import PROMPT, SCRIPT, Recorded, run_agent_fresh
from tests.core.formats.otlp_openai_agents import run_agents_sdk
from tests.core.formats.otlp_producers import SDK_SCOPE

FINAL = "Booked Hotel Storchen ✓"
CONTENT_ON = {"ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE": "content"}


def _billed(rec: Recorded) -> tuple[int, int]:
    """What the fake upstream billed: the usage of each reply it sent."""
    replies = SCRIPT[: len(rec.requests)]
    return sum(r.usage[0] for r in replies), sum(r.usage[1] for r in replies)


def _check_one_step_per_call(path: Path, rec: Recorded, scopes: set[str]) -> None:
    doc = load(path)
    kinds = [e.kind for e in doc.effects]
    models = [i for i, k in enumerate(kinds) if k == "model"]
    assert len(models) == len(rec.requests) == 3
    assert [k for k in kinds if k.startswith("tool:")] == [f"tool:{n}" for _, n in rec.tool_calls]
    totals = [token_usage(doc.result(i)["usage"]) for i in models]
    assert (sum(t.input for t in totals), sum(t.output for t in totals)) == _billed(rec)
    assert doc.result(models[-1])["text"] == FINAL
    for i in models:  # every other report of the call is in the raw view, with the step
        record = doc.extra["records"][i]
        seen = {record["scope"]} | {r["scope"] for r in record.get("same_call", [])}
        assert seen == scopes
    summary = json.loads(core("summary", path, "--json").stdout)
    assert summary["output"] == FINAL
    assert (summary["input_tokens"], summary["output_tokens"]) == _billed(rec)


@pytest.mark.parametrize(
    ("producers", "scopes"),
    [
        (
            ("openinference-anthropic",),
            {SDK_SCOPE, "openinference.instrumentation.anthropic"},
        ),
        (
            ("openllmetry-anthropic",),
            {SDK_SCOPE, "opentelemetry.instrumentation.anthropic"},
        ),
        (
            ("openinference-anthropic", "openllmetry-anthropic"),
            {
                SDK_SCOPE,
                "openinference.instrumentation.anthropic",
                "opentelemetry.instrumentation.anthropic",
            },
        ),
    ],
)
def test_the_anthropic_sdk_spans_beside_an_instrumentation(
    producers: tuple[str, ...], scopes: set[str], tmp_path: Path
) -> None:
    path = tmp_path / "run.otlp.pb"
    rec = run_agent_fresh(producers[0], path, also=("anthropic-sdk", *producers[1:]))
    _check_one_step_per_call(path, rec, scopes)


def test_the_anthropic_sdk_recording_content_too(tmp_path: Path) -> None:
    """With its content switch on, the SDK's span is as rich as OpenInference's: still one."""
    path = tmp_path / "run.otlp.pb"
    rec = run_agent_fresh("openinference-anthropic", path, also=("anthropic-sdk",), env=CONTENT_ON)
    _check_one_step_per_call(path, rec, {SDK_SCOPE, "openinference.instrumentation.anthropic"})


def test_the_anthropic_sdk_spans_alone(tmp_path: Path) -> None:
    """No instrumentation: the SDK's own spans are the calls (tokens from them)."""
    path = tmp_path / "run.otlp.pb"
    rec = run_agent_fresh("anthropic-sdk", path, env=CONTENT_ON)
    _check_one_step_per_call(path, rec, {SDK_SCOPE})


@pytest.mark.parametrize("stream", [False, True])
def test_openllmetry_and_openinference_on_one_openai_client(stream: bool, tmp_path: Path) -> None:
    path = tmp_path / "run.otlp.pb"
    rec = run_agent_fresh("openinference-openai", path, stream=stream, also=("openllmetry-openai",))
    scopes = {"openinference.instrumentation.openai", "opentelemetry.instrumentation.openai.v1"}
    _check_one_step_per_call(path, rec, scopes)


@pytest.mark.parametrize("stream", [True, False])
def test_the_openai_agents_sdk_with_openinference(stream: bool, tmp_path: Path) -> None:
    """The Agents SDK's response span around the OpenAI client's report of the same call:
    streamed, the inner report has neither the answer nor the tokens (issue 22, item 2)."""
    path = tmp_path / "agents.otlp.pb"
    rec = run_agents_sdk(path, stream)
    assert rec.output == FINAL
    doc = load(path)
    kinds = [e.kind for e in doc.effects]
    assert kinds == ["model", "tool:search", "tool:search", "model", "tool:book", "model"]
    assert [(e.kind, e.depth) for e in doc.effects if e.depth] == []  # one agent, no sub-agent
    models = [i for i, k in enumerate(kinds) if k == "model"]
    assert len(models) == len(rec.requests)
    totals = [token_usage(doc.result(i)["usage"]) for i in models]
    assert (sum(t.input for t in totals), sum(t.output for t in totals)) == _billed(rec)
    assert doc.result(models[-1])["text"] == FINAL
    summary = json.loads(core("summary", path, "--json").stdout)
    assert summary["output"] == FINAL and summary["model"] == "gpt-4o"
    assert summary["episodes"] == [PROMPT]
