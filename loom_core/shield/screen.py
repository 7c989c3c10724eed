"""Rewrite a model response so blocked tool calls never reach the agent (§7.8).

Three dialects, chosen from the response's shape like loom-harness does:

* Anthropic Messages: each blocked ``tool_use`` block becomes, in place,
  ``{"type": "text", "text": notice}``; ``stop_reason`` becomes ``end_turn``
  when no ``tool_use`` is left.
* OpenAI Chat Completions (``choices``): blocked entries leave
  ``message.tool_calls``; the notices are appended to ``message.content``
  (existing text first, joined with ``"\\n"``); with no call left,
  ``tool_calls`` is removed and ``finish_reason`` becomes ``stop``. Every
  choice is screened.
* OpenAI Responses (``"object": "response"``, or an ``output`` list): our
  shape, loom-harness does not screen it. Client-executed call items --
  ``function_call`` (name, JSON ``arguments``), ``custom_tool_call`` (name,
  free-text ``input``) and ``local_shell_call`` (screened as tool
  ``local_shell`` with its ``action`` as input) -- are replaced in place by
  ``{"type": "message", "role": "assistant", "status": "completed",
  "content": [{"type": "output_text", "text": notice, "annotations": []}]}``,
  mirroring the Anthropic rewrite; the message has no ``id`` because no
  server stored it. Server-side tool items already ran upstream and pass.

Gemini (``candidates``) passes unscreened, as in loom-harness. A response
with nothing blocked or edited is returned as the very same object. An
edited-then-approved call keeps its place with the operator's arguments.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from typing import Any, NamedTuple

from loom_core.shield.approvals import PendingApproval
from loom_core.shield.events import Verdict, notice_for

CallSteps = Callable[[str, Any], Generator[PendingApproval, None, Verdict]]
Steps = Generator[PendingApproval, None, "ScreenResult"]


class ScreenResult(NamedTuple):
    """The body the client may see, the ``shield_events`` to record, and every call's verdict."""

    body: dict[str, Any]
    events: list[dict[str, Any]]
    verdicts: list[Verdict]


def dialect_of(response: Any) -> str:
    """``openai``, ``responses``, ``gemini`` or ``anthropic`` (the fallback, as in loom)."""
    if not isinstance(response, dict):
        return "unknown"
    if "choices" in response:
        return "openai"
    if response.get("object") == "response" or (
        isinstance(response.get("output"), list) and "content" not in response
    ):
        return "responses"
    if "candidates" in response:
        return "gemini"
    return "anthropic"


def _name(value: Any) -> str:
    return value if isinstance(value, str) else str(value or "")


def _parse_args(args: Any) -> Any:
    """OpenAI arguments: a JSON string (unparseable -> ``{"_raw": text}``) or an object."""
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        try:
            return json.loads(args or "{}")
        except json.JSONDecodeError:
            return {"_raw": args}
    return {}


def _dump_args(original: Any, edited: Any) -> Any:
    return edited if isinstance(original, dict) else json.dumps(edited)


def _anthropic(response: dict[str, Any], call_steps: CallSteps, verdicts: list[Verdict]) -> Steps:
    content, changed = [], False
    for block in response.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            verdict = yield from call_steps(_name(block.get("name")), block.get("input") or {})
            verdicts.append(verdict)
            if not verdict.allowed:
                content.append({"type": "text", "text": notice_for(verdict)})
                changed = True
                continue
            if verdict.edited:
                block, changed = {**block, "input": verdict.executed_input}, True
        content.append(block)
    if not changed:
        return ScreenResult(response, [], verdicts)
    out = {**response, "content": content}
    if not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
        out["stop_reason"] = "end_turn"
    return ScreenResult(out, [], verdicts)


def _with_notices(content: Any, notices: list[str]) -> Any:
    if isinstance(content, list):  # not OpenAI's shape, but never crash on it
        return content + [{"type": "text", "text": n} for n in notices]
    return "\n".join(filter(None, [content or "", *notices]))


def _openai_choice(
    choice: Any, call_steps: CallSteps, verdicts: list[Verdict]
) -> Generator[PendingApproval, None, tuple[Any, bool]]:
    if not isinstance(choice, dict):
        return choice, False
    message = choice.get("message") or {}
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    kept, notices, changed = [], [], False
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict):
            continue  # junk entries are dropped when the choice is rewritten (as loom does)
        fn = call.get("function") or {}
        args = fn.get("arguments") if isinstance(fn, dict) else None
        verdict = yield from call_steps(
            _name(fn.get("name") if isinstance(fn, dict) else ""), _parse_args(args)
        )
        verdicts.append(verdict)
        if not verdict.allowed:
            notices.append(notice_for(verdict))
            changed = True
            continue
        if verdict.edited:
            new_args = _dump_args(args, verdict.executed_input)
            call = {**call, "function": {**fn, "arguments": new_args}}
            changed = True
        kept.append(call)
    if not changed:
        return choice, False
    new_message = dict(message)
    if notices:
        new_message["content"] = _with_notices(message.get("content"), notices)
    if kept:
        new_message["tool_calls"] = kept
    else:
        new_message.pop("tool_calls", None)
    new_choice = {**choice, "message": new_message}
    if not kept:
        new_choice["finish_reason"] = "stop"
    return new_choice, True


def _openai(response: dict[str, Any], call_steps: CallSteps, verdicts: list[Verdict]) -> Steps:
    choices = response.get("choices") or []
    new_choices, changed = [], False
    for choice in choices if isinstance(choices, list) else ():
        new_choice, this_changed = yield from _openai_choice(choice, call_steps, verdicts)
        new_choices.append(new_choice)
        changed = changed or this_changed
    body = {**response, "choices": new_choices} if changed else response
    return ScreenResult(body, [], verdicts)


def _responses_call(item: dict[str, Any]) -> tuple[str, Any, Callable[[Any], dict[str, Any]]]:
    """(tool name, input, how to put edited input back) for a client-executed call item."""
    kind = item.get("type")
    if kind == "function_call":
        args = item.get("arguments")
        return (
            _name(item.get("name")),
            _parse_args(args),
            lambda new: {**item, "arguments": _dump_args(args, new)},
        )
    if kind == "custom_tool_call":
        return _name(item.get("name")), item.get("input") or "", lambda new: {**item, "input": new}
    return "local_shell", item.get("action") or {}, lambda new: {**item, "action": new}


_RESPONSES_CALLS = ("function_call", "custom_tool_call", "local_shell_call")


def _notice_item(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _responses(response: dict[str, Any], call_steps: CallSteps, verdicts: list[Verdict]) -> Steps:
    output, changed = [], False
    for item in response.get("output") or []:
        if isinstance(item, dict) and item.get("type") in _RESPONSES_CALLS:
            name, tool_input, put_back = _responses_call(item)
            verdict = yield from call_steps(name, tool_input)
            verdicts.append(verdict)
            if not verdict.allowed:
                output.append(_notice_item(notice_for(verdict)))
                changed = True
                continue
            if verdict.edited:
                item, changed = put_back(verdict.executed_input), True
        output.append(item)
    return ScreenResult({**response, "output": output} if changed else response, [], verdicts)


_DIALECTS = {"anthropic": _anthropic, "openai": _openai, "responses": _responses}


def screen_steps(response: dict[str, Any], call_steps: CallSteps) -> Steps:
    """Screen ``response``; ``call_steps`` is a per-call generator like ``Shield.screen_call``.

    Yields whatever ``call_steps`` yields (held approvals); returns the result.
    Events are the verdicts' events in call order.
    """
    verdicts: list[Verdict] = []
    screener = _DIALECTS.get(dialect_of(response))
    if screener is None:
        return ScreenResult(response, [], verdicts)
    result = yield from screener(response, call_steps, verdicts)
    events = [v.event for v in verdicts if v.event is not None]
    return ScreenResult(result.body, events, verdicts)


def screen_response(
    response: dict[str, Any], decide: Callable[[str, Any], Verdict]
) -> ScreenResult:
    """Screen with a plain callback ``decide(name, input) -> Verdict`` (no holding)."""

    def call_steps(name: str, tool_input: Any) -> Generator[PendingApproval, None, Verdict]:
        return decide(name, tool_input)
        yield  # pragma: no cover -- makes this a generator that never yields

    steps = screen_steps(response, call_steps)
    try:
        next(steps)
    except StopIteration as stop:
        result: ScreenResult = stop.value  # what screen_steps returned
        return result
    raise RuntimeError("a plain decide callback cannot hold calls")  # pragma: no cover
