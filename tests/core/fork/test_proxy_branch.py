"""Forking proxy recordings (real SDK clients through our proxy): the exact request is resent,
the branch stays a consistent proxy trace, the prefix's wire and shield events are kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loom_core.fork.edits import Edit
from loom_core.fork.rerun import run_fork
from loom_core.fork.resume import resume_fork
from loom_core.formats.canonical import effect_key, proxy_model_key, proxy_tool_key
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict
from loom_core.providers.base import ModelRequest, ToolSpec
from loom_core.providers.scripted import ScriptedProvider
from tests.core.clis import loom
from tests.core.fork.checks import kinds, loom_ok, read, tail_of
from tests.core.fork.scenarios import A_TOOLS, SYSTEM, trace

NOTE = "Only Tokyo matters."


def tokyo_model(request: ModelRequest) -> dict[str, Any]:
    """With the note: look Tokyo up again (the parent did: recorded), then answer."""
    if request.messages[-1]["content"] == NOTE:
        return {"tool_calls": [{"id": "n1", "name": "get_weather", "input": {"city": "Tokyo"}}]}
    return {"text": "Tokyo: 22°C." if NOTE in json.dumps(request.messages) else "Both fine."}


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "responses"])
def test_fork_a_proxy_recording(parents: dict[str, Any], tmp_path: Path, dialect: str) -> None:
    parent = parents[dialect].path
    provider = ScriptedProvider(responder=tokyo_model)
    out = tmp_path / "b.loom.json"
    result = run_fork(load(parent), parent, 2, Edit(inject=NOTE), provider, out=out)
    assert result.status == "done" and result.output == "Tokyo: 22°C."
    branch, original = read(out), trace(parent)
    assert branch["recorded_via"] == "proxy" and branch["fork"]["source"] == "request"
    assert json.dumps(branch["log"][:2]) == json.dumps(original["log"][:2])
    assert branch["wire"] == original["wire"][:1] and branch["fork"]["wire"] == 1
    assert branch["shield_events"] == [] and branch["episodes"] == original["episodes"]
    tail = tail_of(branch)
    assert kinds(tail) == ["edit", "model", "tool:get_weather", "model"]
    assert [e["key"] for e in tail] == [
        effect_key("edit", {"turn": 1}),
        proxy_model_key(1),
        proxy_tool_key("tool:get_weather", "n1"),
        proxy_model_key(2),
    ]
    assert tail[2]["result"] == "Tokyo: 22°C" and tail[2]["meta"] == {
        "tuid": "n1",
        "from_parent": 3,
    }
    assert tail[1]["meta"]["tools"] == (
        ["get_time", "get_weather"] if dialect == "anthropic" else ["get_weather"]
    )
    first = provider.requests[0]  # the recorded request, resent with the note
    assert first.system == SYSTEM and first.messages[-1]["content"] == NOTE
    assert first.messages[-2]["content"] == "Paris: 18°C"
    assert first.tools[0] == ToolSpec(
        "get_weather", "Weather for a city.", A_TOOLS[0]["input_schema"]
    )
    if dialect == "anthropic":
        assert (first.max_tokens, first.temperature, first.model) == (300, 0.5, "claude-sonnet-4-6")
    loom_ok(out)
    diff = loom("diff", parent, out)
    assert "identical prefix: 2 step(s)" in diff.stdout, diff.stdout


def test_pause_and_resume_on_a_proxy_branch(parents: dict[str, Any], tmp_path: Path) -> None:
    parent = parents["openai"].path
    out = tmp_path / "b.loom.json"
    berlin = {"tool_calls": [{"id": "n9", "name": "get_weather", "input": {"city": "Berlin"}}]}
    assert (
        run_fork(
            load(parent), parent, 4, Edit(inject="And Berlin?"), ScriptedProvider([berlin]), out=out
        ).status
        == "needs_tool_result"
    )
    loom_ok(out)
    done = resume_fork(
        out, ScriptedProvider([{"text": "Berlin: 12°C."}]), tool_result="Berlin: 12°C"
    )
    tail = tail_of(read(out))
    assert done.status == "done" and tail[2]["meta"] == {"tuid": "n9", "supplied": True}
    assert tail[2]["key"] == proxy_tool_key("tool:get_weather", "n9")
    loom_ok(out)


def _with_events(
    path: Path, events: list[dict[str, Any]], per_exchange: list[list[dict[str, Any]]] | None
) -> None:
    data = json.loads(path.read_text())
    data["shield_events"] = events
    save_dict(data, path)
    side = path.with_name("session.exchanges.jsonl")
    if per_exchange is not None:
        lines = [json.loads(line) for line in side.read_text().splitlines()]
        for line in lines:
            if line.get("type") == "exchange":
                line["shield_events"] = per_exchange[line["n"]]
        side.write_text("".join(json.dumps(line) + "\n" for line in lines))


PARIS_OK = {
    "ts": 1.5,
    "tool": "get_weather",
    "input": {"city": "Paris"},
    "rule": "get_*",
    "id": "a1b2c3",
    "action": "approve",
    "via": "operator",
}
TAINT = {"ts": 2.5, "action": "tainted", "via": "sequence", "rule": "taint sk-*"}


def test_the_prefix_keeps_its_shield_events(
    copy_parent: Callable[..., Path], tmp_path: Path
) -> None:
    exact = copy_parent("anthropic")
    _with_events(exact, [PARIS_OK, TAINT], [[PARIS_OK], [TAINT], []])
    result = run_fork(load(exact), exact, 2, Edit(), ScriptedProvider(), out=tmp_path / "a.json")
    assert result.branch["shield_events"] == [PARIS_OK]  # the sidecar: TAINT came with n=1
    loom_ok(tmp_path / "a.json")
    placed = copy_parent("openai", sidecar=False)
    _with_events(placed, [PARIS_OK], None)
    kept = run_fork(load(placed), placed, 2, Edit(), ScriptedProvider()).branch["shield_events"]
    assert kept == [PARIS_OK]  # placed at model step 0, before the fork step
    dropped = run_fork(load(placed), placed, 0, Edit(), ScriptedProvider())
    assert dropped.branch["shield_events"] == []


def test_context_of_a_proxy_branch_shows_the_edit(parents: dict[str, Any], tmp_path: Path) -> None:
    """What the app shows at the first live call is the edited context, note included."""
    from loom_core.views.context import build_context
    from loom_core.views.frames import frame_at

    parent = parents["anthropic"].path
    out = tmp_path / "b.loom.json"
    run_fork(
        load(parent), parent, 2, Edit(inject=NOTE), ScriptedProvider(responder=tokyo_model), out=out
    )
    doc = load(out)
    index = build_context(doc)
    first_live = next(i for i, e in enumerate(doc.effects) if e.kind == "edit") + 1
    frame = frame_at(index, first_live)
    assert frame is not None and frame.rewritten
    assert [m.text for m in frame.messages()][-2:] == ["Paris: 18°C", NOTE]
    later = frame_at(index, len(doc.effects) - 1)  # the answer: note still in context
    assert later is not None and NOTE in [m.text for m in later.messages()]
