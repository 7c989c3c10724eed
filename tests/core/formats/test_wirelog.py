"""Proxy wirelogs (§6.3-6.6): realistic Anthropic and OpenAI exchanges become proxy traces.

Why: a ``.wirelog`` is what a killed proxy leaves behind, and converting it is
the only way to see that session. loom-harness's own crash recovery
(``loom.proxy.compact_wirelog``) is the oracle: our trace must carry the same
log, wire, episodes and systems, and loom's tools must accept the file.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from loom import Run
from loom.proxy import compact_wirelog

from loom_core.formats.canonical import proxy_model_key, proxy_tool_key
from loom_core.formats.loader import load
from loom_core.formats.trace import checksum_state
from loom_core.formats.wire import WireRecorder, proxy_sys_hash
from loom_core.views.frames import frame_at
from loom_core.views.timeline import F_DENIED, F_SHIELD, K_MODEL, build_timeline
from tests.core.clis import core, loom

WEATHER_SYSTEM = "You are a weather bot. build_id=2026.07.1"
WEATHER_TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
    {"name": "delete_city", "description": "Remove a city.", "input_schema": {"type": "object"}},
]
DENY_NOTICE = (
    '[loom shield] Blocked tool call delete_city({"city": "Paris"}) -- matched deny '
    "rule 'delete_*'. The call was not executed."
)


def anthropic_exchanges() -> list[dict[str, Any]]:
    """Three Messages API exchanges: tool_use, its tool_result, a new user turn + a denial."""
    user1 = {
        "role": "user",
        "content": [
            {"type": "text", "text": "<system-reminder>cwd is /tmp</system-reminder>"},
            {"type": "text", "text": "Weather in Paris?"},
        ],
    }
    resp1 = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_01A",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 420, "output_tokens": 55, "cache_read_input_tokens": 0},
    }
    result = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01A",
                "content": [{"type": "text", "text": "18°C, sunny ☀"}],
            }
        ],
    }
    resp2 = {
        "id": "msg_02",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "It is 18°C and sunny in Paris."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 510, "output_tokens": 20},
    }
    resp3 = {
        "id": "msg_03",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "text", "text": "Tokyo: 22°C. "},
            {"type": "text", "text": DENY_NOTICE},
        ],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 600, "output_tokens": 30},
    }
    system = [{"type": "text", "text": WEATHER_SYSTEM, "cache_control": {"type": "ephemeral"}}]
    base = {
        "model": "claude-sonnet-4-5-20250929",
        "max_tokens": 1024,
        "system": system,
        "tools": WEATHER_TOOLS,
    }
    history = [user1, {"role": "assistant", "content": resp1["content"]}, result]
    later = [
        *history,
        {"role": "assistant", "content": resp2["content"]},
        {"role": "user", "content": "And Tokyo? 東京, then delete Paris"},
    ]
    deny = {
        "ts": 1795934289.177808,
        "tool": "delete_city",
        "input": {"city": "Paris"},
        "rule": "delete_*",
        "action": "deny",
        "via": "rule",
    }
    return [
        {"request": {**base, "messages": [user1]}, "response": resp1, "shield_events": []},
        {"request": {**base, "messages": history}, "response": resp2, "shield_events": []},
        {"request": {**base, "messages": later}, "response": resp3, "shield_events": [deny]},
    ]


def openai_exchanges() -> list[dict[str, Any]]:
    """Two Chat Completions exchanges: a tool call with JSON-string arguments, then the answer."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "search_hotels",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    messages = [
        {"role": "system", "content": "You are a helpful travel agent."},
        {"role": "user", "content": "Book a hotel in Zürich"},
    ]
    call = {
        "id": "call_abc",
        "type": "function",
        "function": {"name": "search_hotels", "arguments": '{"city": "Z\\u00fcrich"}'},
    }
    resp1 = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1795934289,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
            }
        ],
        "usage": {"prompt_tokens": 80, "completion_tokens": 20, "total_tokens": 100},
    }
    resp2 = {
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "created": 1795934290,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Booked Hotel Storchen ✓"},
            }
        ],
        "usage": {"prompt_tokens": 130, "completion_tokens": 12, "total_tokens": 142},
    }
    second = [
        *messages,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_abc", "content": "Hotel Storchen, 240 CHF"},
    ]
    base = {"model": "gpt-4o-mini", "tools": tools}
    return [
        {"request": {**base, "messages": messages}, "response": resp1, "shield_events": []},
        {"request": {**base, "messages": second}, "response": resp2, "shield_events": []},
    ]


def write_wirelog(path: Path, exchanges: list[dict[str, Any]], garbage: bool = False) -> Path:
    """One JSON line per exchange, as the proxy appends them; optionally junk in the middle."""
    lines = [json.dumps(x) for x in exchanges]
    if garbage:
        lines.insert(1, '{"request": {"model": "x", "messages": [')  # a torn write
    path.write_text("\n".join(lines) + "\n")
    return path


DIALECTS = {"anthropic": anthropic_exchanges, "openai": openai_exchanges}


@pytest.fixture(params=sorted(DIALECTS))
def wirelog(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return write_wirelog(tmp_path / f"{request.param}.wirelog", DIALECTS[request.param]())


def _without_sys_role(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop ``meta.sys_role``: a best-effort heuristic label we do not reproduce (§1.2)."""
    return [
        {**e, "meta": {k: v for k, v in e.get("meta", {}).items() if k != "sys_role"}} for e in log
    ]


def test_convert_matches_loom_crash_recovery(wirelog: Path, tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours.loom.json", tmp_path / "theirs.loom.json"
    done = core("convert", wirelog, "-o", ours)
    assert done.returncode == 0, done.stderr
    compact_wirelog(str(wirelog), str(theirs))
    a, b = json.loads(ours.read_text()), json.loads(theirs.read_text())
    assert list(a) == list(b)  # the proxy writer's member order
    for member in b:
        if member not in ("log", "checksum"):
            assert a[member] == b[member], member
    assert _without_sys_role(a["log"]) == _without_sys_role(b["log"])


def test_loom_tools_accept_the_converted_trace(wirelog: Path, tmp_path: Path) -> None:
    out = tmp_path / "converted.loom.json"
    assert core("convert", wirelog, "-o", out).returncode == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = Run.load(str(out))
    assert run.output == load(wirelog).header.output
    assert loom("trace", "verify", out).returncode == 0
    shown = loom("timeline", out)
    assert shown.returncode == 0 and "tool:" in shown.stdout
    assert checksum_state(load(out)) == "valid"


def test_proxy_keys_and_tool_ids(wirelog: Path) -> None:
    doc = load(wirelog)
    assert doc.format == "wirelog" and doc.is_proxy and not doc.torn
    exchange = 0
    for i, eff in enumerate(doc.effects):
        assert eff.depth == 0
        if eff.kind == "model":
            assert eff.key == proxy_model_key(exchange)
            exchange += 1
        else:
            tuid = doc.meta(i).tuid
            assert eff.kind.startswith("tool:") and tuid
            assert eff.key == proxy_tool_key(eff.kind, tuid)
    assert exchange == len(doc.wire_values) == len(wirelog.read_text().splitlines())


def test_anthropic_facts(tmp_path: Path) -> None:
    doc = load(write_wirelog(tmp_path / "a.wirelog", anthropic_exchanges()))
    assert [e.kind for e in doc.effects] == ["model", "tool:get_weather", "model", "model"]
    assert doc.episodes == ["Weather in Paris?", "And Tokyo? 東京, then delete Paris"]
    assert proxy_sys_hash(WEATHER_SYSTEM) == "ae00f1483656"  # loom-format.md §3.4, verified
    assert doc.systems == {"ae00f1483656": WEATHER_SYSTEM}
    assert doc.result(1) == "18°C, sunny ☀" and doc.meta(1).tuid == "toolu_01A"
    assert doc.meta(0).tools == ["delete_city", "get_weather"] and doc.meta(2).msgs == 3
    assert doc.header.output == "Tokyo: 22°C. " + DENY_NOTICE
    assert doc.header.model == "claude-sonnet-4-5-20250929"
    tl = build_timeline(doc)
    assert (tl.input_tokens, tl.output_tokens) == (1530, 105)
    assert tl.total_cost == pytest.approx((1530 * 3.0 + 105 * 15.0) / 1e6)
    tool_step, first_model = tl.step_of_effect[1], tl.step_of_effect[0]
    assert tl.call_of[tool_step] == first_model
    last = tl.step_of_effect[3]
    assert tl.flags[last] & F_SHIELD and tl.flags[last] & F_DENIED
    assert tl.shield_at == {last: [0]}
    assert tl.context is not None
    frame = frame_at(tl.context, 2)
    assert frame is not None and frame.system() == (WEATHER_SYSTEM, True)
    assert frame.tools() == (["delete_city", "get_weather"], True)
    assert [(m.role, m.text) for m in frame.messages()] == [
        ("user", "Weather in Paris?"),
        ("assistant", "Let me check."),
        ("tool", "18°C, sunny ☀"),
    ]


def test_openai_facts(tmp_path: Path) -> None:
    doc = load(write_wirelog(tmp_path / "o.wirelog", openai_exchanges()))
    assert [e.kind for e in doc.effects] == ["model", "tool:search_hotels", "model"]
    calls = doc.result(0)["tool_calls"]
    assert calls == [{"id": "call_abc", "name": "search_hotels", "input": {"city": "Zürich"}}]
    assert doc.result(0)["text"] == "" and doc.result(0)["stop_reason"] == "tool_use"
    assert doc.episodes == ["Book a hotel in Zürich"]
    assert doc.header.system == "You are a helpful travel agent."
    assert doc.header.output == "Booked Hotel Storchen ✓"
    tl = build_timeline(doc)
    assert (tl.input_tokens, tl.output_tokens) == (210, 32)
    assert tl.call_of[tl.step_of_effect[1]] == tl.step_of_effect[0]
    assert sum(1 for s in range(len(tl)) if tl.kind[s] == K_MODEL) == 2


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_garbage_line_in_the_middle_is_skipped(dialect: str, tmp_path: Path) -> None:
    clean = load(write_wirelog(tmp_path / "clean.wirelog", DIALECTS[dialect]()))
    dirty_path = write_wirelog(tmp_path / "dirty.wirelog", DIALECTS[dialect](), garbage=True)
    dirty = load(dirty_path)
    assert [(e.kind, e.key) for e in dirty.effects] == [(e.kind, e.key) for e in clean.effects]
    assert [dirty.result(i) for i in range(len(dirty))] == [
        clean.result(i) for i in range(len(clean))
    ]
    assert dirty.torn and dirty.warnings == ("1 unreadable line(s) skipped",)
    theirs = tmp_path / "theirs.loom.json"
    compact_wirelog(str(dirty_path), str(theirs))  # loom skips it too
    assert len(json.loads(theirs.read_text())["log"]) == len(dirty.effects)


def test_recorder_used_directly_gives_the_same_trace(tmp_path: Path) -> None:
    """The recorder API (for a future live proxy) and the wirelog loader agree."""
    rec = WireRecorder()
    for x in anthropic_exchanges():
        rec.record(x["request"], x["response"], x["shield_events"])
    trace = rec.to_trace()
    doc = load(write_wirelog(tmp_path / "a.wirelog", anthropic_exchanges()))
    assert [e["key"] for e in trace["log"]] == [e.key for e in doc.effects]
    assert trace["episodes"] == doc.episodes and trace["wire"] == doc.wire_values
    assert len(trace["shield_events"]) == len(doc.shield_events) == 1
