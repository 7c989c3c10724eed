"""Model re-run on harness-style parents: the branch, its tail, its stops and its provenance."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from loom_core.fork.edits import Edit, MessageOp
from loom_core.fork.rerun import run_fork
from loom_core.fork.resume import resume_fork
from loom_core.formats.loader import load
from loom_core.providers.base import CancelToken, ModelRequest, ToolSpec
from loom_core.providers.scripted import ScriptedProvider, failing
from tests.core.fork.checks import kinds, loom_ok, read, tail_of, texts
from tests.core.fork.scenarios import trace

NOTE = "Only Oslo matters."


def weather_model(request: ModelRequest) -> dict[str, Any]:
    """Answers from what it was sent: briefly when the note is there, else it checks Paris."""
    if any(NOTE in str(m["content"]) for m in request.messages):
        return {"text": "Oslo is cold.", "usage": {"input_tokens": 50, "output_tokens": 5}}
    if request.messages[-1]["role"] != "tool":
        return {"text": "", "tool_calls": [{"name": "get_weather", "input": {"city": "Paris"}}]}
    return {"text": "Paris is mild.", "usage": {"input_tokens": 60, "output_tokens": 6}}


def test_an_injected_note_changes_the_tail_and_keeps_the_prefix(
    parents: dict[str, Any], tmp_path: Path
) -> None:
    parent = parents["weather"]
    doc = load(parent)
    plain = run_fork(
        doc,
        parent,
        3,
        Edit(),
        ScriptedProvider(responder=weather_model),
        out=tmp_path / "plain.loom.json",
    )
    noted = run_fork(
        doc,
        parent,
        3,
        Edit(inject=NOTE),
        ScriptedProvider(responder=weather_model),
        out=tmp_path / "noted.loom.json",
        reason="try a hint",
    )
    assert (plain.status, noted.status) == ("done", "done")
    a, b = read(tmp_path / "plain.loom.json"), read(tmp_path / "noted.loom.json")
    assert texts(tail_of(a)) == ["Paris is mild."] and texts(tail_of(b)) == ["Oslo is cold."]
    assert (a["output"], b["output"]) == ("Paris is mild.", "Oslo is cold.")
    original = trace(parent)["log"]
    for branch in (a, b):  # the prefix: the parent's entries, unchanged, in the same layout
        assert json.dumps(branch["log"][:3]) == json.dumps(original[:3])
        assert [e["seq"] for e in branch["log"]] == list(range(len(branch["log"])))
        assert branch["log"][3]["kind"] == "edit" and branch["truncated"] is False
        loom_ok(tmp_path / ("plain.loom.json" if branch is a else "noted.loom.json"))
    assert b["log"][3]["result"][-1] == {
        "role": "user",
        "content": NOTE,
        "source": "fork-edit",
        "pinned": False,
        "tokens": 4,
        "tool_calls": [],
        "tool_call_id": "",
        "name": "",
    }
    assert b["fork"]["reason"] == "try a hint"


def test_recorded_results_are_reused_once_each_preferring_the_relived_part(
    parents: dict[str, Any], tmp_path: Path
) -> None:
    parent = parents["weather"]
    paris = {"name": "get_weather", "input": {"city": "Paris"}}
    script = [{"tool_calls": [paris, paris]}, {"text": "done"}]
    result = run_fork(
        load(parent), parent, 3, Edit(), ScriptedProvider(script), out=tmp_path / "b.loom.json"
    )
    tail = tail_of(read(tmp_path / "b.loom.json"))
    tools = [e for e in tail if e["kind"] == "tool:get_weather"]
    # seq 4 (at/after the fork step) first, then seq 1 from the replayed prefix
    assert [(e["result"], e["meta"]["from_parent"]) for e in tools] == [
        ("Paris: reading 2", 4),
        ("Paris: reading 1", 1),
    ]
    assert (result.status, result.reused, result.live_calls) == ("done", 2, 2)


def test_harness_branch_is_what_loom_harness_itself_writes(
    parents: dict[str, Any], tmp_path: Path
) -> None:
    """Same parent, same edit, same model answers: our branch's log equals loom-harness's
    own fork (keys included) but for our meta notes on where tool results came from."""
    parent, theirs_path, tool = parents["pair"]
    edit = Edit(
        messages=[MessageOp("insert", 6, {"role": "user", "content": "Be brief. ✓"})],
        tools=[ToolSpec(tool.name, tool.description, tool.input_schema)],
    )
    provider = ScriptedProvider(
        [
            {
                "text": "d",
                "tool_calls": [{"id": "x3", "name": "triple", "input": {"n": 3}}],
                "usage": {"input_tokens": 13, "output_tokens": 1},
            }
        ]
    )
    out = tmp_path / "ours.loom.json"
    first = run_fork(load(parent), parent, 5, edit, provider, out=out)
    assert first.status == "needs_tool_result"  # the parent never computed triple(3)
    done = resume_fork(
        out,
        ScriptedProvider([{"text": "e ✓", "usage": {"input_tokens": 14, "output_tokens": 1}}]),
        tool_result=9,
    )
    assert done.status == "done"
    ours, theirs = read(out), trace(theirs_path)
    for e in ours["log"]:
        e.get("meta", {}).pop("supplied", None)
    assert ours["log"] == theirs["log"]
    for member in ("system", "prompt", "episodes", "output", "truncated", "stop_reason", "systems"):
        assert ours[member] == theirs[member], member
    loom_ok(out)


def test_max_turns_stops_a_runaway(parents: dict[str, Any], tmp_path: Path) -> None:
    parent = parents["weather"]
    loop = ScriptedProvider(
        responder=lambda r: {"tool_calls": [{"name": "get_weather", "input": {"city": "Paris"}}]}
    )
    result = run_fork(
        load(parent), parent, 0, Edit(), loop, max_turns=2, out=tmp_path / "b.loom.json"
    )
    branch = read(tmp_path / "b.loom.json")
    assert result.status == "max_turns" and result.live_calls == 2 == len(loop.requests)
    assert (branch["truncated"], branch["stop_reason"]) == (True, "max_steps")
    assert branch["fork"]["status"] == "max_turns"
    loom_ok(tmp_path / "b.loom.json")


def test_a_token_budget_stops_and_can_be_raised(parents: dict[str, Any], tmp_path: Path) -> None:
    parent = parents["weather"]
    oslo = {
        "tool_calls": [{"name": "get_weather", "input": {"city": "Oslo"}}],
        "usage": {"input_tokens": 500, "output_tokens": 50},
    }
    out = tmp_path / "b.loom.json"
    result = run_fork(
        load(parent), parent, 0, Edit(), ScriptedProvider([oslo, oslo]), budget_tokens=1000, out=out
    )
    branch = read(out)
    assert result.status == "budget" and result.live_calls == 2
    assert (branch["truncated"], branch["stop_reason"]) == (True, "budget")
    assert kinds(tail_of(branch)) == ["edit", "model", "tool:get_weather", "model"]
    loom_ok(out)
    more = resume_fork(out, ScriptedProvider([{"text": "Oslo is cold."}]), budget_tokens=5000)
    # the stopped reply's call is answered first; Oslo's one recorded result is used up
    assert more.status == "needs_tool_result" and more.pending_call["input"] == {"city": "Oslo"}


def test_cancel_keeps_what_was_recorded(parents: dict[str, Any], tmp_path: Path) -> None:
    parent = parents["weather"]
    token = CancelToken()
    seen: list[dict[str, Any]] = []

    def stream(entry: dict[str, Any]) -> None:
        seen.append(entry)
        if entry["kind"] == "model":
            token.cancel()  # the user clicks Cancel as the first reply arrives

    out = tmp_path / "b.loom.json"
    provider = ScriptedProvider(
        responder=lambda r: {"tool_calls": [{"name": "get_weather", "input": {"city": "Paris"}}]}
    )
    result = run_fork(
        load(parent), parent, 0, Edit(), provider, cancel=token, on_effect=stream, out=out
    )
    branch = read(out)
    assert result.status == "cancelled" and len(provider.requests) == 1
    assert kinds(tail_of(branch)) == ["edit", "model"] and seen == tail_of(branch)
    assert branch["fork"]["status"] == "cancelled"
    loom_ok(out)
    during = CancelToken()
    late = ScriptedProvider(responder=lambda r: during.cancel() or {"text": "too late"})
    result = run_fork(load(parent), parent, 0, Edit(), late, cancel=during)
    assert result.status == "cancelled" and kinds(tail_of(result.branch)) == ["edit"]


def test_a_provider_error_keeps_everything_before_it(
    parents: dict[str, Any], tmp_path: Path
) -> None:
    parent = parents["weather"]
    out = tmp_path / "b.loom.json"
    script = [
        {"tool_calls": [{"name": "get_weather", "input": {"city": "Oslo"}}]},
        failing("529 overloaded"),
    ]
    result = run_fork(load(parent), parent, 0, Edit(), ScriptedProvider(script), out=out)
    branch = read(out)
    assert result.status == "error" and "529 overloaded" in result.error
    assert branch["fork"]["error"] == result.error
    assert kinds(tail_of(branch)) == ["edit", "model", "tool:get_weather"]
    loom_ok(out)
    again = resume_fork(out, ScriptedProvider([{"text": "Oslo is cold."}]))
    assert again.status == "done" and texts(tail_of(read(out))) == ["", "Oslo is cold."]
    assert "error" not in read(out)["fork"]


def test_provenance(parents: dict[str, Any], tmp_path: Path) -> None:
    parent = parents["weather"]
    edit = Edit(inject=NOTE, redact=[2], model="claude-haiku-4-5", reason="why not")
    out = tmp_path / "b.loom.json"
    run_fork(load(parent), parent, 3, edit, ScriptedProvider(responder=weather_model), out=out)
    fork = read(out)["fork"]
    assert fork["parent"] == {
        "path": str(Path(parent).resolve()),
        "checksum": trace(parent)["checksum"],
    }
    assert (fork["step"], fork["turn"], fork["mode"], fork["status"]) == (3, 1, "model", "done")
    assert fork["edit"] == edit.to_dict() and fork["reason"] == "why not"
    assert (fork["provider"], fork["model"]) == ("scripted", "claude-haiku-4-5")
    assert datetime.fromisoformat(fork["created_at"]).tzinfo is not None
    assert "pending_call" not in fork and fork["source"] == "frame"
    assert read(out)["model"] == "claude-haiku-4-5"
