"""Pausing on a call the parent never made, resuming from the saved file, stopping."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loom_core.errors import LoadError
from loom_core.fork.edits import Edit
from loom_core.fork.rerun import run_fork
from loom_core.fork.resume import resume_fork
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict
from loom_core.providers.scripted import ScriptedProvider
from tests.core.fork.checks import kinds, loom_ok, read, tail_of

ROME = {"name": "get_weather", "input": {"city": "Rome"}}
OSLO = {"name": "get_weather", "input": {"city": "Oslo"}}


def paused(parent: Path, out: Path, calls: list[dict[str, Any]]) -> ScriptedProvider:
    provider = ScriptedProvider([{"text": "Checking Rome.", "tool_calls": calls}])
    result = run_fork(load(parent), parent, 0, Edit(inject="Also Rome."), provider, out=out)
    assert result.status == "needs_tool_result"
    return provider


def test_an_unseen_call_pauses_and_resumes_with_a_supplied_result(
    parents: dict[str, Any], tmp_path: Path
) -> None:
    parent, out = parents["weather"], tmp_path / "b.loom.json"
    first = paused(parent, out, [ROME, OSLO])
    branch = read(out)
    pending = branch["fork"]["pending_call"]
    assert pending == {"id": "call_2_0", "name": "get_weather", "input": {"city": "Rome"}}
    assert branch["fork"]["status"] == "needs_tool_result" and branch["truncated"] is True
    assert branch["output"] == "Checking Rome." and branch["paused"] is False
    loom_ok(out)

    second = ScriptedProvider([{"text": "Rome is warm, Oslo cold."}])
    done = resume_fork(out, second, tool_result="Rome: 25°C")
    assert done.status == "done" and (done.supplied, done.reused) == (1, 1)
    tail = tail_of(read(out))
    assert kinds(tail) == ["edit", "model", "tool:get_weather", "tool:get_weather", "model"]
    assert tail[2]["result"] == "Rome: 25°C" and tail[2]["meta"]["supplied"] is True
    assert tail[3]["result"] == "Oslo: reading 1" and tail[3]["meta"]["from_parent"] == 2
    # the resumed call saw exactly the paused context plus the reply and both results
    sent = second.requests[0].messages
    assert sent[:-3] == first.requests[0].messages
    assert [(m["role"], m["content"]) for m in sent[-3:]] == [
        ("assistant", "Checking Rome."),
        ("tool", "Rome: 25°C"),
        ("tool", "Oslo: reading 1"),
    ]
    assert "pending_call" not in read(out)["fork"] and read(out)["output"] == (
        "Rome is warm, Oslo cold."
    )
    loom_ok(out)


def test_resume_refuses_what_does_not_fit(parents: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "b.loom.json"
    paused(parents["weather"], out, [ROME])
    with pytest.raises(
        ValueError, match=r"waits for a result of get_weather\(\{\"city\": \"Rome\"\}\)"
    ):
        resume_fork(out, ScriptedProvider())
    stopped = resume_fork(out, ScriptedProvider(), stop=True, out=tmp_path / "s.loom.json")
    assert stopped.status == "stopped" and read(out)["fork"]["status"] == "needs_tool_result"
    loom_ok(tmp_path / "s.loom.json")
    with pytest.raises(ValueError, match="the branch is stopped"):
        resume_fork(tmp_path / "s.loom.json", ScriptedProvider(), tool_result="x")
    done = tmp_path / "d.loom.json"
    run_fork(load(parents["weather"]), parents["weather"], 5, Edit(), ScriptedProvider(), out=done)
    with pytest.raises(ValueError, match="the branch is done"):
        resume_fork(done, ScriptedProvider(), tool_result="x")
    with pytest.raises(ValueError, match="not a branch"):
        resume_fork(parents["weather"], ScriptedProvider())
    with pytest.raises(LoadError, match="no such file"):
        resume_fork(tmp_path / "missing.loom.json", ScriptedProvider())


def test_a_budget_stop_is_not_waiting_for_a_result(parents: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "b.loom.json"
    big = {"tool_calls": [OSLO], "usage": {"input_tokens": 900, "output_tokens": 200}}
    run_fork(
        load(parents["weather"]),
        parents["weather"],
        0,
        Edit(),
        ScriptedProvider([big]),
        budget_tokens=1000,
        out=out,
    )
    with pytest.raises(ValueError, match="not waiting for a tool result"):
        resume_fork(out, ScriptedProvider(), tool_result="x")


def test_a_changed_parent_is_refused(copy_parent: Callable[..., Path], tmp_path: Path) -> None:
    parent = copy_parent("weather")
    out = tmp_path / "b.loom.json"
    paused(parent, out, [ROME])
    data = json.loads(parent.read_text())
    data["output"] = "rewritten"
    save_dict(data, parent)  # a valid trace, but not the one the branch was forked from
    with pytest.raises(ValueError, match="changed since the branch was forked"):
        resume_fork(out, ScriptedProvider(), tool_result="Rome: 25°C")
    # the caller can hand the parent over itself (e.g. after moving files around)
    shutil.copy(out, tmp_path / "c.loom.json")
    result = resume_fork(
        tmp_path / "c.loom.json", ScriptedProvider(), tool_result="Rome: 25°C", parent=load(parent)
    )
    assert result.status == "done"
