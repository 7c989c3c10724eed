"""One trace's spans flattened into loom steps (model calls, tool calls) with depth.

Why a module of its own: ordering, nesting and recovering unrecorded tool calls is the part
of the OTLP reader that knows nothing of attribute names (those are in
:mod:`loom_core.formats.otlp_genai`) and nothing of encodings (:mod:`.otlp_decode`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loom_core.formats.foreign import RunBuilder
from loom_core.formats.otlp_calls import Call, group_calls, same_call_records
from loom_core.formats.otlp_decode import Span
from loom_core.formats.otlp_genai import (
    ModelCall,
    ToolCall,
    agent_name,
    model_call,
    role_of,
    run_output,
    tool_call,
)
from loom_core.formats.otlp_messages import MessageCache, arguments, text_of


def roots_of(spans: list[Span]) -> list[Span]:
    """Spans whose parent is not among ``spans``, earliest first."""
    ids = {s.span_id for s in spans}
    return sorted((s for s in spans if s.parent_id not in ids), key=lambda s: s.start_ns)


@dataclass
class _Tree:
    """The span tree of one run, with each span's GenAI role."""

    spans: list[Span]
    by_id: dict[str, Span] = field(default_factory=dict)
    role: dict[str, str] = field(default_factory=dict)
    has_step_below: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.by_id = {s.span_id: s for s in self.spans}
        self.role = {s.span_id: role_of(s) for s in self.spans}
        for span in self.spans:
            if self.role[span.span_id] in ("model", "tool"):
                self.has_step_below.update(up.span_id for up in self.ancestors(span))

    def ancestors(self, span: Span) -> list[Span]:
        out: list[Span] = []
        seen = {span.span_id}
        parent = self.by_id.get(span.parent_id)
        while parent is not None and parent.span_id not in seen:  # a cycle in bad data ends
            out.append(parent)
            seen.add(parent.span_id)
            parent = self.by_id.get(parent.parent_id)
        return out

    def wrappers(self, span: Span) -> list[Span]:
        """Ancestors up to the nearest tool or agent: only a model span around another
        with none between can be the same call (one around a tool that ran a sub-agent,
        as the AI SDK's streamed calls are, is a call of its own)."""
        out: list[Span] = []
        for up in self.ancestors(span):
            if self.role[up.span_id] in ("tool", "agent"):
                break
            out.append(up)
        return out

    def agents_above(self, span: Span) -> list[Span]:
        return [a for a in self.ancestors(span) if self.role[a.span_id] == "agent"]

    def steps(self, cache: MessageCache) -> list[Span | Call]:
        """Tool spans and model calls (each call once, see :mod:`.otlp_calls`) in time
        order: by start, except that a tool with steps below it (one that ran a
        sub-agent) comes when it ended, after them."""
        models = [s for s in self.spans if self.role[s.span_id] == "model"]
        calls = group_calls(models, lambda s: model_call(s, cache), self.wrappers)
        tools: list[Span | Call] = [s for s in self.spans if self.role[s.span_id] == "tool"]

        def when(step: Span | Call) -> tuple[int, int]:
            if isinstance(step, Call):
                return (step.start_ns, step.span.end_ns)
            below = step.span_id in self.has_step_below
            return (step.end_ns if below else step.start_ns, step.end_ns)

        return sorted(tools + list(calls), key=when)

    def owners(self, steps: list[Span | Call]) -> set[str]:
        """Agent spans that own a step directly (the nearest agent above it): only they
        make a depth. An agent span around agents and nothing else (the OpenAI Agents
        SDK's trace, as OpenInference writes it) is a wrapper, not a level."""
        out: set[str] = set()
        for step in steps:
            above = self.agents_above(step.span if isinstance(step, Call) else step)
            if above:
                out.add(above[0].span_id)
        return out


@dataclass
class _Pending:
    """Tool calls a model asked for that no tool step has answered yet, per depth; and, per
    depth, the reply of the last model call if it named no tool call (``silent``)."""

    calls: dict[int, dict[str, str]] = field(default_factory=dict)  # depth -> id -> name
    silent: dict[int, dict[str, Any]] = field(default_factory=dict)  # depth -> model result

    def asked(self, depth: int, result: dict[str, Any]) -> None:
        """A model call at ``depth`` replied ``result`` (its ``tool_calls`` now open)."""
        calls = result["tool_calls"]
        self.calls.setdefault(depth, {}).update({c["id"]: c["name"] for c in calls if c.get("id")})
        self.silent.pop(depth, None)
        if not calls:
            self.silent[depth] = result

    def take(self, depth: int, tool: ToolCall) -> str:
        """The call id a tool step answers (its own, or the first open one of its name).

        A call the last model call at its depth did not name is added to that reply: its
        span lost the calls (OpenLLMetry-JS drops them from a streamed AI SDK call whose
        text is empty) and the tool span is the record of what the model asked."""
        open_calls = self.calls.setdefault(depth, {})
        call_id = tool.call_id
        if not call_id:
            call_id = next((i for i, n in open_calls.items() if n == tool.name), "")
        elif call_id not in open_calls and depth in self.silent:
            reply = self.silent[depth]
            reply["tool_calls"].append(
                {"id": call_id, "name": tool.name, "input": arguments(tool.arguments)}
            )
            reply["stop_reason"] = "tool_use"
        open_calls.pop(call_id, None)
        return call_id


def build_run(spans: list[Span], warnings: list[str] | None = None) -> RunBuilder:
    """The run of ``spans`` (one trace, or several loose ones) as a :class:`RunBuilder`;
    values shown raw rather than counted are named in ``warnings``."""
    tree = _Tree(sorted(spans, key=lambda s: (s.start_ns, s.end_ns)))
    builder = RunBuilder()
    inputs: dict[int, list[dict[str, Any]]] = {}
    records: dict[int, Any] = {}
    seq_of: dict[str, int] = {}
    pending = _Pending()
    cache: MessageCache = {}
    recorded = False
    steps = tree.steps(cache)
    owners = tree.owners(steps)
    for n in range(len(steps)):
        step = steps[n]
        span = step.span if isinstance(step, Call) else step
        above = tree.agents_above(span)
        depth = max(0, len([a for a in above if a.span_id in owners]) - 1)
        # the nearest agent names the step (handoffs between top-level agents show too)
        meta = {"agent": agent_name(above[0])} if above else {}
        if isinstance(step, Call):
            call = step.call
            recorded = recorded or call.inputs is not None or call.has_output
            _recover_tools(builder, records, pending, call, (depth, meta), span)
            seq = _add_model(builder, call, depth, meta)
            if call.inputs is not None:
                inputs[seq] = call.inputs
            pending.asked(depth, builder.log[seq]["result"])
            records[seq] = span.record()
            if step.others:
                records[seq]["same_call"] = same_call_records(step)
            if warnings is not None:
                warnings += [f"step {seq} ({span.name}): {p}; shown raw" for p in call.problems]
        else:
            span = _requested_first(steps, n, tree, pending.calls.get(depth, {}))
            tool = tool_call(span)
            call_id = pending.take(depth, tool)
            result = tool.error or tool.result  # a failed tool: loom's ERROR: string
            seq = builder.add_tool(
                tool.name, call_id or span.span_id, result, depth=depth, meta=meta
            )
            records[seq] = span.record()
        seq_of[span.span_id] = seq
        for other in step.others if isinstance(step, Call) else ():
            seq_of[other.span_id] = seq
    first = min((s.start_ns for s in spans if s.start_ns > 0), default=0)
    roots = roots_of(spans)
    builder.output = builder.output or (run_output(roots[0]) if roots else "")
    builder.extra.update(
        started=first / 1e9 if 0 < first < 1 << 63 else None,  # the Runs page's "When"
        inputs=inputs,
        records=records,
        content_recorded=recorded,
        tree=[_node(tree, s, seq_of.get(s.span_id)) for s in tree.spans],
    )
    return builder


def _requested_first(
    order: list[Span | Call], n: int, tree: _Tree, open_calls: dict[str, str]
) -> Span:
    """The tool span to take at ``order[n]``: of the sibling tool spans that started at the
    same instant (parallel tool calls, timed to the millisecond as some JavaScript set-ups
    do), the one whose call the model asked for first; ``order`` is rearranged to match."""
    first = order[n]
    assert isinstance(first, Span)
    end = n + 1
    while end < len(order):
        other = order[end]
        if not isinstance(other, Span) or tree.role[other.span_id] != "tool":
            break
        if (other.start_ns, other.parent_id) != (first.start_ns, first.parent_id):
            break
        end += 1
    if end - n > 1 and open_calls:
        rank = {call_id: i for i, call_id in enumerate(open_calls)}
        tied = [s for s in order[n:end] if isinstance(s, Span)]
        tied.sort(key=lambda s: rank.get(tool_call(s).call_id, len(rank)))
        order[n:end] = tied
    step = order[n]
    assert isinstance(step, Span)
    return step


def _add_model(builder: RunBuilder, call: ModelCall, depth: int, meta: dict[str, Any]) -> int:
    if depth == 0:
        builder.model = builder.model or call.model
        builder.system = builder.system or call.system
        for msg in call.inputs or []:
            if msg["role"] == "user":
                builder.add_episode(text_of(msg["content"]))
    meta = dict(meta)
    if call.model:
        meta["model"] = call.model
    if call.tools:
        meta["tools"] = call.tools
    if call.inputs is not None:
        meta["msgs"] = len(call.inputs)
    return builder.add_model(
        call.text, call.tool_calls, call.usage, depth=depth, stop_reason=call.stop_reason, meta=meta
    )


def _recover_tools(
    builder: RunBuilder,
    records: dict[int, Any],
    pending: _Pending,
    call: ModelCall,
    where: tuple[int, dict[str, Any]],
    span: Span,
) -> None:
    """Tool results the next call was sent for calls no tool span recorded, as tool steps
    (``where``: the depth and meta of that call, its agent's)."""
    depth, meta = where
    open_calls = pending.calls.get(depth) or {}
    if not open_calls or call.inputs is None:
        return
    for call_id, msg in _tool_answers(call.inputs):
        if call_id in open_calls:
            name = open_calls.pop(call_id)
            seq = builder.add_tool(name, call_id, msg["content"], depth=depth, meta=meta)
            records[seq] = {"recovered_from_span": span.span_id, "message": msg}


def _tool_answers(inputs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(call id, tool message) for each tool result a call was sent. A result without its
    call's id (OpenLLMetry's event mode drops it) answers the previous assistant
    message's calls in their order, as the API requires them to follow."""
    out: list[tuple[str, dict[str, Any]]] = []
    asked: list[str] = []
    for msg in inputs:
        if msg["role"] == "assistant":
            asked = [str(c.get("id") or "") for c in msg.get("tool_calls", [])]
        elif msg["role"] == "tool":
            call_id = msg.get("tool_call_id") or (asked[0] if asked else "")
            asked = [a for a in asked if a != call_id]
            if call_id:
                out.append((call_id, msg))
    return out


def _node(tree: _Tree, span: Span, seq: int | None) -> dict[str, Any]:
    return {
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "name": span.name,
        "kind": span.kind,
        "role": tree.role[span.span_id],
        "start": span.start_ns,
        "end": span.end_ns,
        "seq": seq,
    }
