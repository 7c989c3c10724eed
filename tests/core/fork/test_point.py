"""The context at a fork point: reconstructed (harness), exact from the sidecar (proxy), edited."""

from __future__ import annotations

import dataclasses
import gc
import json
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loom_core.fork.edits import REDACTED, Edit, MessageOp
from loom_core.fork.point import apply_edit, context_index, fork_context
from loom_core.fork.rerun import run_fork
from loom_core.formats.canonical import effect_key
from loom_core.formats.loader import load
from loom_core.providers.base import ToolSpec
from loom_core.providers.scripted import ScriptedProvider
from tests.core.fork.scenarios import A_TOOLS, SYSTEM, trace


def roles(ctx: Any) -> list[tuple[str, str, str]]:
    return [(m["role"], m["content"], m["tool_call_id"]) for m in ctx.messages]


# -- reconstructed from the log ----------------------------------------------------------


def test_frame_context_equals_loom_harness_fork_snapshot(parents: dict[str, Any]) -> None:
    parent, branch, _tool = parents["pair"]
    doc = load(parent)
    ctx = fork_context(doc, parent, 5)
    assert (ctx.source, ctx.turn, ctx.style, ctx.agent) == ("frame", 2, "harness", "forker")
    note = {"role": "user", "content": "Be brief. ✓"}  # loom's add_user: source "user"
    edited = apply_edit(ctx, Edit(messages=[MessageOp("insert", len(ctx.messages), note)]))
    theirs = next(e for e in trace(branch)["log"] if e["kind"] == "edit")
    assert edited.messages == theirs["result"]
    assert theirs["key"] == effect_key("edit", {"turn": ctx.turn})


def test_frame_context_knows_origins_and_tools_by_name(parents: dict[str, Any]) -> None:
    doc = load(parents["weather"])
    ctx = fork_context(doc, parents["weather"], 5)
    assert roles(ctx) == [
        ("user", "Weather in Paris and Oslo?", ""),
        ("assistant", "Checking.", ""),
        ("tool", "Paris: reading 1", "w1"),
        ("tool", "Oslo: reading 1", "w2"),
        ("assistant", "Again.", ""),
        ("tool", "Paris: reading 2", "w3"),
    ]
    assert ctx.origins == [None, 0, 1, 2, 3, 4]
    assert ctx.messages[1]["tool_calls"][1] == {
        "id": "w2",
        "name": "get_weather",
        "input": {"city": "Oslo"},
    }
    assert ctx.tools == [ToolSpec("get_weather")]  # schemas are not in a trace
    assert (ctx.system, ctx.model, ctx.source) == ("You forecast.", "claude-sonnet-4-5", "frame")


def test_bad_fork_points(parents: dict[str, Any], harness_traces: dict[str, Any]) -> None:
    doc = load(parents["weather"])
    with pytest.raises(ValueError, match="step 1 is a tool:get_weather step, not a model step"):
        fork_context(doc, parents["weather"], 1)
    with pytest.raises(ValueError, match="no step 99"):
        fork_context(doc, parents["weather"], 99)
    sub = harness_traces["subagent"]
    sub_doc = load(sub.path)
    child = next(e.seq for e in sub_doc.effects if e.kind == "model" and e.depth == 1)
    with pytest.raises(ValueError, match="sub-agent's model step"):
        fork_context(sub_doc, sub.path, child)


# -- exact from the proxy's sidecar ------------------------------------------------------

EXPECTED = [
    ("user", "Weather in Paris and Tokyo?", ""),
    ("assistant", "Let me check.", ""),
    ("tool", "Paris: 18°C", "t1"),
    ("assistant", "", ""),
    ("tool", "Tokyo: 22°C", "t2"),
]


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "responses"])
def test_sidecar_gives_the_exact_request(parents: dict[str, Any], dialect: str) -> None:
    parent = parents[dialect]
    ctx = fork_context(load(parent.path), parent.path, 4)
    assert (ctx.source, ctx.dialect, ctx.style, ctx.system) == ("request", dialect, "proxy", SYSTEM)
    sent = parent.requests[2]  # what the upstream received for step 4
    reminder = [("user", "<system-reminder>cwd is /tmp</system-reminder>", "")]
    assert roles(ctx) == (reminder if dialect == "anthropic" else []) + EXPECTED
    calls = [c for m in ctx.messages for c in m["tool_calls"]]
    assert calls == [
        {"id": "t1", "name": "get_weather", "input": {"city": "Paris"}},
        {"id": "t2", "name": "get_weather", "input": {"city": "Tokyo"}},
    ]
    assert [m["name"] for m in ctx.messages if m["role"] == "tool"] == ["get_weather"] * 2
    assert ctx.origins[-3:] == [1, None, 3]  # tool results point at their tool steps
    schema = A_TOOLS[0]["input_schema"]
    if dialect == "anthropic":
        assert ctx.tools == [
            ToolSpec(t["name"], t["description"], t["input_schema"]) for t in sent["tools"]
        ]
        assert (ctx.max_tokens, ctx.temperature) == (300, 0.5)
    else:
        assert ctx.tools == [ToolSpec("get_weather", "Weather for a city.", schema)]
    assert ctx.model == sent["model"]


def test_without_sidecar_the_context_is_reconstructed(copy_parent: Callable[..., Path]) -> None:
    path = copy_parent("openai", sidecar=False)
    ctx = fork_context(load(path), path, 4)
    assert ctx.source == "frame"
    assert roles(ctx) == EXPECTED
    assert ctx.tools == [ToolSpec("get_weather")]  # offered by name (proxy meta.tools)


def _rewrite_sidecar(path: Path, change: Callable[[list[dict[str, Any]]], None]) -> None:
    side = path.with_name("session.exchanges.jsonl")
    lines = [json.loads(line) for line in side.read_text().splitlines()]
    change(lines)
    side.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_sidecar_that_does_not_match_is_not_trusted(copy_parent: Callable[..., Path]) -> None:
    path = copy_parent("anthropic")

    def other_answer(lines: list[dict[str, Any]]) -> None:
        lines[3]["response"]["content"][0]["text"] = "something else"  # exchange n=2

    _rewrite_sidecar(path, other_answer)
    assert fork_context(load(path), path, 4).source == "frame"
    _rewrite_sidecar(path, lambda lines: lines.__delitem__(slice(2, None)))  # only n=0 left
    assert fork_context(load(path), path, 4).source == "frame"
    assert fork_context(load(path), path, 0).source == "request"


# -- forking a branch again --------------------------------------------------------------


@pytest.mark.parametrize(
    "name, step, city, result",
    [("anthropic", 2, "Tokyo", "Tokyo: 22°C"), ("weather", 3, "Oslo", "Oslo: reading 1")],
)
def test_a_branch_forks_from_its_edited_context(
    parents: dict[str, Any], tmp_path: Path, name: str, step: int, city: str, result: str
) -> None:
    parent = parents[name].path if name == "anthropic" else parents[name]
    tools = [ToolSpec("get_weather", "Weather.", {"type": "object"})]
    call = {"id": "n1", "name": "get_weather", "input": {"city": city}}
    out = tmp_path / "b.loom.json"
    run_fork(
        load(parent),
        parent,
        step,
        Edit(inject="first note", tools=tools, max_tokens=64),
        ScriptedProvider([{"tool_calls": [call]}, {"text": "done"}]),
        out=out,
    )
    branch = load(out)
    last = branch.effects[-1].seq  # the branch's own live model step
    ctx = fork_context(branch, out, last)
    before = fork_context(load(parent), parent, step)
    assert roles(ctx) == roles(before) + [
        ("user", "first note", ""),
        ("assistant", "", ""),
        ("tool", result, "n1"),
    ]
    assert ctx.messages[-3]["source"] == "fork-edit" and ctx.messages[-2]["tool_calls"] == [call]
    assert ctx.origins[-1] == last - 1  # the reused result's step in the branch
    assert ctx.tools == tools and ctx.max_tokens == 64  # from the branch's fork.request


# -- edits -------------------------------------------------------------------------------


def test_apply_edit(parents: dict[str, Any]) -> None:
    doc = load(parents["weather"])
    ctx = fork_context(doc, parents["weather"], 5)
    before = json.dumps(ctx.to_dict())
    tools = [ToolSpec("get_weather", "Weather.", {"type": "object"})]
    out = apply_edit(
        ctx,
        Edit(
            system="Be terse.",
            inject="Only Paris matters.",
            redact=[4],
            model="claude-haiku-4-5",
            temperature=0.2,
            max_tokens=99,
            tools=tools,
        ),
    )
    assert json.dumps(ctx.to_dict()) == before  # the input is never changed
    assert out.system == "Be terse." and out.tools == tools
    assert (out.model, out.temperature, out.max_tokens) == ("claude-haiku-4-5", 0.2, 99)
    redacted = out.messages[5]
    assert (redacted["role"], redacted["content"], redacted["tool_call_id"]) == (
        "tool",
        REDACTED,
        "w3",
    )
    assert out.messages[-1]["source"] == "fork-edit"
    assert out.messages[-1]["content"] == "Only Paris matters."
    assert len(out.messages) == len(out.origins) == 7


def test_message_ops_and_their_errors(parents: dict[str, Any]) -> None:
    ctx = fork_context(load(parents["weather"]), parents["weather"], 5)
    out = apply_edit(
        ctx,
        Edit(
            messages=[
                MessageOp("replace", 0, {"role": "user", "content": "Weather in Rome?"}),
                MessageOp("delete", 5),
                MessageOp("insert", 1, {"role": "user", "content": "(hint)"}),
            ]
        ),
    )
    assert [m["content"] for m in out.messages][:3] == ["Weather in Rome?", "(hint)", "Checking."]
    assert len(out.messages) == 6 and out.origins[:2] == [None, None]
    with pytest.raises(ValueError, match="out of range"):
        apply_edit(ctx, Edit(messages=[MessageOp("delete", 6)]))
    with pytest.raises(ValueError, match="unknown op 'swap'"):
        apply_edit(ctx, Edit(messages=[MessageOp("swap", 0)]))
    with pytest.raises(ValueError, match="cannot redact step 0"):
        apply_edit(ctx, Edit(redact=[0]))  # a model step has no tool result


def test_a_forked_document_is_freed_once_dropped(parents: dict[str, Any]) -> None:
    """The walk a fork builds is kept with its document, once, and goes with it: a cache
    keyed by the document (weakly, but holding the walk, which holds the document) kept
    every document a fork had looked at, and a big run's mapping, for the process's life."""
    parent, _branch, _tool = parents["pair"]
    doc = load(parent)
    fork_context(doc, parent, 5)
    walked = context_index(doc)
    assert context_index(doc) is walked  # built once
    assert dataclasses.replace(doc, torn=True).derived == {}  # a copy walks its own log
    gone = weakref.ref(doc)
    del doc, walked
    gc.collect()
    assert gone() is None
