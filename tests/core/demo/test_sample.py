"""The bundled sample trace: generated, loom-harness-valid, and showing every feature."""

from __future__ import annotations

import builtins
import json
import subprocess
import sys
import time
import warnings
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import pytest

from loom_core.demo import sample
from loom_core.formats.canonical import effect_key
from loom_core.formats.loader import load
from loom_core.views.frames import frame_at, neutral_messages
from loom_core.views.timeline import F_BLOCKED, F_DENIED, F_ERROR, K_MODEL, build_timeline

RESOURCE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"
LOOM_CLI = Path(sys.executable).with_name("loom")


@pytest.fixture(scope="module")
def timeline() -> Any:
    return build_timeline(load(RESOURCE))


def test_resource_is_what_the_generator_writes(tmp_path: Path) -> None:
    out = tmp_path / "sample.loom.json"
    assert sample.main([str(out)]) == 0
    assert out.read_bytes() == RESOURCE.read_bytes(), "run `make sample` to regenerate"
    sample.main([str(tmp_path / "again.loom.json")])
    assert (tmp_path / "again.loom.json").read_bytes() == out.read_bytes()


def test_shape_is_harness_v2() -> None:
    data = json.loads(RESOURCE.read_bytes())
    log = data["log"]
    assert data["version"] == 2 and data["model"] == "claude-sonnet-4-5"
    assert 25 <= len(log) <= 40
    assert len(data["episodes"]) == 2 and data["prompt"] == data["episodes"][0]
    assert log[0]["kind"] == "time" and "meta" not in log[0]
    for i, entry in enumerate(log):
        assert entry["seq"] == i
        assert list(entry)[:5] == ["seq", "kind", "key", "result", "depth"]
    models = [e for e in log if e["kind"] == "model"]
    assert {e["meta"]["agent"] for e in models} == {"lead", "reviewer"}
    assert set(data["systems"].values()) == set(sample.SYSTEMS.values())
    assert data["output"] == models[-1]["result"]["text"]
    assert [
        e["input_tokens"]
        for e in (m["result"]["usage"] for m in models if m["meta"]["agent"] == "lead")
    ] == sorted(
        m["result"]["usage"]["input_tokens"] for m in models if m["meta"]["agent"] == "lead"
    )
    assert any(500 <= len(e["result"]) <= 2000 for e in log if e["kind"].startswith("tool:"))
    (event,) = data["shield_events"]
    assert list(event) == ["ts", "tool", "input", "rule", "action", "via"]
    assert (event["action"], event["via"]) == ("deny", "rule")
    # the denied call is in no model response, so no tool effect can belong to it
    assert all(c["input"] != event["input"] for m in models for c in m["result"]["tool_calls"])


def test_loom_harness_loads_it_without_warnings() -> None:
    import loom

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = loom.Run.load(str(RESOURCE))
    assert len(run.log) == len(json.loads(RESOURCE.read_bytes())["log"])


def test_loom_trace_verify_accepts_it() -> None:
    proc = subprocess.run(
        [str(LOOM_CLI), "trace", "verify", str(RESOURCE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_timeline_shows_every_feature(timeline: Any) -> None:
    steps = range(len(timeline))
    assert any(timeline.depth[s] == 1 for s in steps)
    assert any(timeline.flags[s] & F_ERROR for s in steps)
    assert any(timeline.flags[s] & F_BLOCKED for s in steps)
    (denied,) = [s for s in steps if timeline.flags[s] & F_DENIED]
    assert timeline.kind[denied] == K_MODEL
    text = timeline.doc.result(timeline.effect_of[denied])["text"]
    assert "[loom shield] Blocked tool call run_shell(" in text
    assert isinstance(timeline.total_cost, float) and timeline.total_cost > 0


def test_model_keys_recompute_from_frames(timeline: Any) -> None:
    doc = timeline.doc
    checked = 0
    for i, eff in enumerate(doc.effects):
        if eff.kind != "model":
            continue
        agent = doc.meta(i).agent
        payload = {
            "system": sample.SYSTEMS[agent],
            "messages": neutral_messages(frame_at(timeline.context, i)),
            "tools": sample.TOOLS[agent],
        }
        assert effect_key("model", payload) == eff.key, f"model effect {i} ({agent})"
        checked += 1
    assert checked >= 10


def test_real_harness_records_the_same_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replay the sample's responses through loom-harness itself: the log must be identical.

    This checks what the frame-based test cannot: meta attribution, effect order,
    ERROR/BLOCKED strings and tool-call repr, as the real harness produces them.
    """
    import loom
    from loom.providers import ScriptedProvider

    data = sample.build_sample()
    log = data["log"]
    responses: dict[str, list[Any]] = defaultdict(list)
    results: dict[str, deque] = defaultdict(deque)
    for entry in log:
        r = entry["result"]
        if entry["kind"] == "model":
            calls = [
                loom.ToolCall(id=c["id"], name=c["name"], input=c["input"]) for c in r["tool_calls"]
            ]
            responses[entry["meta"]["agent"]].append(
                loom.ModelResponse(
                    text=r["text"], tool_calls=calls, stop_reason=r["stop_reason"], usage=r["usage"]
                )
            )
        elif entry["kind"].startswith("tool:") and not str(r).startswith("BLOCKED:"):
            results[entry["kind"][5:]].append(r)

    def fn_for(name: str) -> Any:
        def fn(**_: Any) -> Any:
            value = results[name].popleft()
            if isinstance(value, str) and value.startswith("ERROR: "):
                cls, msg = value[len("ERROR: ") :].split(": ", 1)
                raise getattr(builtins, cls)(msg)
            return value

        return fn

    def tools(schemas: list[dict[str, Any]]) -> list[Any]:
        return [
            loom.Tool(s["name"], s["description"], fn_for(s["name"]), s["input_schema"])
            for s in schemas
            if s["name"] not in sample.DELEGATIONS
        ]

    def provider(agent: str) -> Any:
        return ScriptedProvider(responses[agent], model=sample.MODEL)

    reviewer = loom.Agent(
        model=sample.MODEL,
        name="reviewer",
        system=sample.SYSTEMS["reviewer"],
        tools=tools(sample.REVIEWER_TOOLS),
        provider=provider("reviewer"),
    )
    delegate = next(s for s in sample.LEAD_TOOLS if s["name"] == "reviewer")
    lead_tools = tools(sample.LEAD_TOOLS)
    lead_tools.insert(
        sample.LEAD_TOOLS.index(delegate),
        reviewer.as_tool(name="reviewer", description=delegate["description"]),
    )
    lead = loom.Agent(
        model=sample.MODEL,
        name="lead",
        system=sample.SYSTEMS["lead"],
        tools=lead_tools,
        provider=provider("lead"),
        clock=True,
        policy=loom.Policy(deny=["git_push"]),
    )
    monkeypatch.setattr(time, "time", lambda: log[0]["result"])
    recorded = lead.run(data["episodes"]).to_dict()

    assert json.dumps(recorded["log"]) == json.dumps(log)
    assert recorded["systems"] == data["systems"]
    expected = {k: v for k, v in data.items() if k != "shield_events"}
    assert list(recorded)[: len(expected)] == list(expected)
    assert {k: recorded[k] for k in expected} == expected
