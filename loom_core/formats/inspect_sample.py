"""One sample of an Inspect AI log as a loom run: its events become loom effects.

Facts relied on, all from inspect-ai's own source (0.3.x, ``inspect_ai/log`` and
``inspect_ai/event``), written down because no spec is published:

* a sample member holds ``events`` (each with an ``event`` tag), ``attachments`` and
  ``events_data``. Condensing (``log/_condense.py``) replaced every event string longer
  than 100 characters by ``attachment://<hash>``, the text being ``attachments[hash]``
  (older logs: ``tc://``); model events' ``input`` was moved into a message pool,
  ``events_data.messages``, and replaced by ``input_refs``: ``[start, end)`` ranges into
  it (``event/_pool.py``). Both are undone here, lazily.
* ``model`` events: ``model``, ``output.choices[0].message`` (``content``: a string or
  parts; ``tool_calls``: ``{id, function, arguments}``), ``output.usage``
  (``input_tokens`` *excludes* cache reads and writes, which are
  ``input_tokens_cache_read`` / ``_write``; ``reasoning_tokens``), ``error``.
* ``tool`` events: ``id`` (the call id), ``function``, ``arguments``, ``result``,
  ``error: {type, message}`` (``type == "approval"``: an approver rejected the call).
  A tool event is written when the call starts, inside the span of type ``tool`` the
  call opened; a sub-agent run as a tool (``as_tool``) writes its events inside that
  span, so the tool's effect is placed at the span's end, after the sub-agent's work.
* ``span_begin`` / ``span_end`` (``id``, ``parent_id``, ``type``, ``name``): spans of type
  ``agent`` (and the older ``subtask``) are agents. Depth is how many agent spans
  enclose an event, less those enclosing the first model call. Before spans existed,
  ``subtask`` and ``tool`` events held their sub-events in ``events``: read as depth + 1.
* ``approval`` (an approver's ``decision`` on a ``call``; ``auto`` approvals of every
  call excepted) and ``input`` (an operator's answer) are human steps; every other
  event type is counted, not shown.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec

from loom_core.errors import LoadError
from loom_core.formats.foreign import RunBuilder
from loom_core.formats.inspect_score import add_grading, scorer_of, take_score
from loom_core.formats.inspect_values import (
    answer_of,
    decoded,
    resolve,
    response_of,
    text_of,
    usage,
)
from loom_core.formats.inspect_walk import Walk

_ABSENT = msgspec.Raw(b"")  # msgspec cannot decode ``Raw | None``: an absent member is empty


class _Sample(msgspec.Struct):
    id: Any = None
    epoch: Any = None
    input: Any = None
    events: list[msgspec.Raw] = []
    attachments: Any = None
    events_data: msgspec.Raw = _ABSENT
    error: Any = None
    limit: Any = None
    output: Any = None
    scores: Any = None


class _Pool(msgspec.Struct):
    messages: list[msgspec.Raw] = []


class _Event(msgspec.Struct):
    event: Any = None
    span_id: Any = None
    id: Any = None
    parent_id: Any = None
    type: Any = None
    name: Any = None
    model: Any = None
    input: msgspec.Raw = _ABSENT
    input_refs: Any = None
    output: Any = None
    error: Any = None
    function: Any = None
    arguments: Any = None
    result: Any = None
    call: msgspec.Raw = _ABSENT
    decision: Any = None
    approver: Any = None
    explanation: Any = None
    message: Any = None
    events: msgspec.Raw = _ABSENT
    action: Any = None  # step events (older logs)
    score: Any = None
    intermediate: Any = None


_sample_decoder = msgspec.json.Decoder(_Sample)
_event_decoder = msgspec.json.Decoder(_Event)


def walk(data: bytes, path: str, member: str) -> tuple[Walk, _Sample]:
    """Read sample member ``member`` (its bytes ``data``) into a :class:`RunBuilder`."""
    try:
        sample = _sample_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as err:
        raise LoadError(path, f"{member} is not an Inspect sample ({err})") from err
    attachments = sample.attachments if isinstance(sample.attachments, dict) else {}
    pool: list[msgspec.Raw] = []
    if sample.events_data:
        try:
            pool = msgspec.json.decode(sample.events_data, type=_Pool).messages
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass  # inputs that point into it show as empty
    state = Walk(RunBuilder(), attachments, pool)
    _episodes(state, sample.input)
    _events(state, sample.events, 0)
    for held in list(state.held.values()):  # spans never closed (a cancelled sample)
        _place_tool(state, *held)
    if isinstance(sample.output, dict):  # the sample's answer, never a grader's verdict
        state.run.output = answer_of(sample.output, attachments)
    if state.counts["(unreadable)"]:
        state.warnings.append(
            f"{state.counts['(unreadable)']} event(s) of {member} are not event objects and were skipped"
        )
    return state, sample


def _episodes(state: Walk, value: Any) -> None:
    if isinstance(value, str):
        state.run.add_episode(resolve(value, state.attachments))
    elif isinstance(value, list):
        for message in value:
            if isinstance(message, dict) and message.get("role") == "user":
                state.run.add_episode(text_of(resolve(message.get("content"), state.attachments)))


def _events(state: Walk, raws: list[msgspec.Raw], extra: int) -> None:
    for raw in raws:
        try:
            ev = _event_decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            state.counts["(unreadable)"] += 1
            continue
        kind = ev.event if isinstance(ev.event, str) else "(untyped)"
        for member in ("span_id", "parent_id"):  # span ids are dict keys: strings only
            if not isinstance(getattr(ev, member), str):
                setattr(ev, member, None)
        state.counts[kind] += 1
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(state, ev, raw, extra)
        if len(ev.events) > 2 and kind in ("tool", "subtask"):  # pre-span nesting (not [])
            try:
                nested = msgspec.json.decode(ev.events, type=list[msgspec.Raw])
            except (msgspec.DecodeError, msgspec.ValidationError):
                nested = []
            _events(state, nested, extra + 1)


def _span_begin(state: Walk, ev: _Event, _raw: msgspec.Raw, _extra: int) -> None:
    if isinstance(ev.id, str):
        state.spans[ev.id] = (ev.parent_id, ev.type, ev.name)
        if ev.type == "tool":
            state.open_tools.append(ev.id)


def _span_end(state: Walk, ev: _Event, _raw: msgspec.Raw, _extra: int) -> None:
    if ev.id in state.open_tools:
        state.open_tools.remove(ev.id)
    held = state.held.pop(ev.id, None) if isinstance(ev.id, str) else None
    if held is not None:
        _place_tool(state, *held)


def _model(state: Walk, ev: _Event, raw: msgspec.Raw, extra: int) -> None:
    output = ev.output if isinstance(ev.output, dict) else {}
    text, calls, stop = response_of(output, state.attachments)
    if isinstance(ev.error, str) and ev.error:
        state.warnings.append(f"model call {state.calls + 1} failed: {ev.error[:200]}")
    state.calls += 1
    scorer = scorer_of(state.scoring, state.spans, ev.span_id)
    if scorer is not None:  # a grader's call: the scorer's step, not the agent's
        seq = add_grading(
            state.run, state.scoring, scorer, text, usage(output.get("usage")), ev.model
        )
    else:
        meta = {"agent": state.agent_name(ev.span_id), "model": ev.model}
        seq = state.run.add_model(
            text,
            calls,
            usage(output.get("usage")),
            depth=state.depth(ev, extra),
            stop_reason=stop,
            meta={k: v for k, v in meta.items() if isinstance(v, str) and v},
        )
    state.records[seq] = raw
    if ev.input_refs is not None and isinstance(ev.input_refs, list):
        state.inputs[seq] = ev.input_refs
    elif ev.input:
        state.inputs[seq] = ev.input
    if not state.run.system and seq in state.inputs and scorer is None:
        first = state.inputs[seq]
        if first and isinstance(first[0], dict) and first[0].get("role") == "system":
            state.run.system = text_of(first[0].get("content"))


def _tool_event(state: Walk, ev: _Event, raw: msgspec.Raw, extra: int) -> None:
    depth = state.depth(ev, extra)
    span = state.open_tools[-1] if state.open_tools else None
    if span is not None and span not in state.held and state.spans[span][2] == ev.function:
        state.held[span] = (ev, raw, depth)  # placed at the span's end: after a sub-agent
        return
    _place_tool(state, ev, raw, depth)


def _place_tool(state: Walk, ev: _Event, raw: msgspec.Raw, depth: int) -> None:
    name = ev.function if isinstance(ev.function, str) else ""
    err = ev.error
    if isinstance(err, dict):
        cause = err.get("message")
        if err.get("type") == "approval":
            result: Any = f"BLOCKED: {name} rejected: {cause}"
        else:
            result = f"ERROR: {err.get('type')}: {cause}"
    else:
        result = resolve(ev.result, state.attachments)
    call_id = ev.id if isinstance(ev.id, str) else ""
    seq = state.run.add_tool(name, call_id, result, depth=depth)
    state.records[seq] = raw


def _approval(state: Walk, ev: _Event, raw: msgspec.Raw, extra: int) -> None:
    if ev.approver == "auto" and ev.decision == "approve":
        return  # a policy that lets every call through: a human step per call says nothing
    call = decoded(ev.call, state.attachments) if ev.call else {}
    call = call if isinstance(call, dict) else {}
    args = json.dumps(call.get("arguments"), ensure_ascii=False, default=str)
    question = f"{ev.approver or 'approver'}: allow {call.get('function')}({args})?"
    answer = str(ev.decision) + (f": {ev.explanation}" if ev.explanation else "")
    seq = state.run.add_human(question, answer, depth=state.depth(ev, extra))
    state.records[seq] = raw


def _input(state: Walk, ev: _Event, raw: msgspec.Raw, extra: int) -> None:
    answer = decoded(ev.input, state.attachments) if ev.input else ""
    question = ev.message if isinstance(ev.message, str) else "input"
    seq = state.run.add_human(question, str(answer), depth=state.depth(ev, extra))
    state.records[seq] = raw


def _step(state: Walk, ev: _Event, _raw: msgspec.Raw, _extra: int) -> None:
    state.scoring.step_event(ev.action, ev.type, ev.name)


def _score(state: Walk, ev: _Event, _raw: msgspec.Raw, _extra: int) -> None:
    if ev.intermediate is not True:  # a solver's mid-run score is no grader's verdict
        scorer = scorer_of(state.scoring, state.spans, ev.span_id)
        take_score(state.run, state.scoring, scorer, ev.score)


_HANDLERS: dict[str, Callable[[Walk, _Event, msgspec.Raw, int], None]] = {
    "step": _step,
    "score": _score,
    "span_begin": _span_begin,
    "span_end": _span_end,
    "model": _model,
    "tool": _tool_event,
    "approval": _approval,
    "input": _input,
}
