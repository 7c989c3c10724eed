"""Generate the bundled sample trace (``resources/sample.loom.json``).

The sample must look exactly like a trace loom-harness writes (§1-§3 of
loom-format.md), including model keys, which hash everything the provider
received. Traces do not store requests, so hand-written keys would silently be
wrong; instead a tiny deterministic simulator plays the story in
:mod:`loom_core.demo.sample_scenario`, keeping each agent's provider-neutral message
list as the harness does and hashing it at every model call. No loom-harness
import (it is only a dev dependency); the tests check the result against it.

Usage: ``python -m loom_core.demo.sample OUT`` writes the trace (same bytes every run).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loom_core.demo.sample_scenario import (
    LEAD,
    POLICY_DENY,
    REVIEWER,
    STEPS,
    TIME_START,
    AgentSpec,
    Call,
    Denied,
    Episode,
    Turn,
)
from loom_core.formats.canonical import canonical_bytes, harness_sys_hash
from loom_core.formats.entries import effect_entry
from loom_core.formats.save import save_dict

MODEL = "claude-sonnet-4-5"
_TOOL_USE_OVERHEAD = 346  # tokens Anthropic adds to the input when tools are offered
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def tool_schema(name: str, description: str, params: dict[str, str]) -> dict[str, Any]:
    """A tool schema in the harness's neutral format (§3.2): part of every model key."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p: {"type": t} for p, t in params.items()},
    }
    if params:
        schema["required"] = list(params)
    return {"name": name, "description": description, "input_schema": schema}


def _schemas(spec: AgentSpec) -> list[dict[str, Any]]:
    return [tool_schema(*t) for t in spec.tools]


# Exported so tests can recompute model keys (schemas are not stored in traces).
LEAD_TOOLS: list[dict[str, Any]] = _schemas(LEAD)
REVIEWER_TOOLS: list[dict[str, Any]] = _schemas(REVIEWER)
SYSTEMS: dict[str, str] = {LEAD.name: LEAD.system, REVIEWER.name: REVIEWER.system}
TOOLS: dict[str, list[dict[str, Any]]] = {LEAD.name: LEAD_TOOLS, REVIEWER.name: REVIEWER_TOOLS}
DELEGATIONS: dict[str, AgentSpec] = {REVIEWER.name: REVIEWER}  # tool name -> sub-agent


def clock_line(ts: float) -> str:
    """The user message ``Agent(clock=True)`` adds after its ``time`` effect."""
    stamp = datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"Current datetime: {stamp}"


def shield_notice(tool: str, args: dict[str, Any], rule: str) -> str:
    """What the client sees instead of a call a static deny rule removed (§7.8)."""
    return (
        f"[loom shield] Blocked tool call {tool}({json.dumps(args, sort_keys=True)}) -- "
        f"matched deny rule '{rule}'. The call was not executed. Do not retry it; "
        "continue without it or explain to the user that the action was blocked by policy."
    )


def tool_call_repr(call: dict[str, Any]) -> str:
    """How a ToolCall object reaches the key hash: its Python repr (§3.2, §13.1)."""
    return f"ToolCall(id={call['id']!r}, name={call['name']!r}, input={call['input']!r})"


def tool_result(call: Call) -> Any:
    """The result the harness records for a call: errors and policy blocks as strings (§1.5)."""
    if call.tool in POLICY_DENY:
        return f"BLOCKED: {call.tool} denied by policy"
    if isinstance(call.result, BaseException):
        return f"ERROR: {type(call.result).__name__}: {call.result}"
    return call.result


@dataclass
class _Agent:
    """One running agent invocation: its spec, depth and growing neutral message list."""

    spec: AgentSpec
    depth: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    delegation: dict[str, Any] | None = None  # the parent's call that started it

    @property
    def tools(self) -> list[dict[str, Any]]:
        return TOOLS[self.spec.name]


class _Recorder:
    """Appends effects in harness layout and keeps the message lists the keys hash."""

    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []
        self.systems: dict[str, str] = {}
        self.shield_events: list[dict[str, Any]] = []
        self.agent_name: str | None = None  # meta.agent: the last agent that called the model
        self.stack: list[_Agent] = [_Agent(LEAD, 0)]
        self.output = ""
        self._ids = 0

    def record(
        self, kind: str, payload: Any, result: Any, depth: int, meta: dict[str, Any] | None = None
    ) -> None:
        meta = meta if meta is not None else ({"agent": self.agent_name} if self.agent_name else {})
        self.log.append(effect_entry(len(self.log), kind, payload, result, depth, meta))

    def call_id(self) -> str:
        """Anthropic-style tool_use ids, derived from a counter so output is stable."""
        self._ids += 1
        n = int.from_bytes(hashlib.sha256(f"sample/{self._ids}".encode()).digest(), "big")
        tail = "".join(_B62[(n >> (6 * i)) % 62] for i in range(22))
        return "toolu_01" + tail

    def episode(self, step: Episode, first: bool) -> None:
        lead = self.stack[0]
        if first:  # Agent(clock=True): a time effect, then the clock line, before episode 0
            self.record("time", {}, TIME_START, 0)
            lead.messages.append({"role": "user", "content": clock_line(TIME_START)})
        lead.messages.append({"role": "user", "content": step.text})

    def turn(self, step: Turn) -> None:
        agent = self.stack[-1]
        assert agent.spec.name == step.agent, f"{step.agent} speaks while {agent.spec.name} runs"
        calls: list[dict[str, Any]] = [
            {"id": self.call_id(), "name": c.tool, "input": c.input} for c in step.calls
        ]
        text = step.text
        if step.denied is not None:
            text += self.deny(step.denied)
        self.model(agent, text, calls)
        for call, spec in zip(calls, step.calls, strict=True):
            if call["name"] in DELEGATIONS:
                assert len(calls) == 1, "a delegation is alone in its turn"
                task = call["input"]["task"]
                self.stack.append(
                    _Agent(
                        DELEGATIONS[call["name"]],
                        agent.depth + 1,
                        [{"role": "user", "content": task}],
                        call,
                    )
                )
            else:
                self.tool(agent, call, tool_result(spec))
        if not calls and len(self.stack) > 1:  # a sub-agent's answer is the call's result
            child = self.stack.pop()
            self.add_tool_message(self.stack[-1], child.delegation or {}, text)
        elif not calls:
            self.output = text

    def model(self, agent: _Agent, text: str, calls: list[dict[str, Any]]) -> None:
        system = agent.spec.system
        payload = {"system": system, "messages": list(agent.messages), "tools": agent.tools}
        # Token counts estimated from what was sent, so input grows with the context.
        sent = len(canonical_bytes(payload))
        usage = {
            "input_tokens": _TOOL_USE_OVERHEAD + math.ceil(sent / 3.6),
            "output_tokens": 9
            + math.ceil(len(text) / 3.8)
            + sum(12 + math.ceil(len(json.dumps(c["input"])) / 3.2) for c in calls),
        }
        result = {
            "text": text,
            "tool_calls": calls,
            "stop_reason": "tool_use" if calls else "end_turn",
            "usage": usage,
        }
        self.agent_name = agent.spec.name
        sys_hash = harness_sys_hash(system)
        self.systems.setdefault(sys_hash, system)
        self.record(
            "model",
            payload,
            result,
            agent.depth,
            {"agent": agent.spec.name, "sys_hash": sys_hash, "sys_head": system[:160]},
        )
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [tool_call_repr(c) for c in calls]
        agent.messages.append(message)

    def tool(self, agent: _Agent, call: dict[str, Any], result: Any) -> None:
        self.record(
            f"tool:{call['name']}", {"id": call["id"], "input": call["input"]}, result, agent.depth
        )
        self.add_tool_message(agent, call, result)

    @staticmethod
    def add_tool_message(agent: _Agent, call: dict[str, Any], result: Any) -> None:
        agent.messages.append(
            {
                "role": "tool",
                "tool_call_id": call.get("id", ""),
                "name": call.get("name", ""),
                "content": str(result),
            }
        )

    def deny(self, denied: Denied) -> str:
        """Record a static-deny shield event; return the notice glued onto the text (§13.9)."""
        self.shield_events.append(
            {
                "ts": round(TIME_START + denied.at, 6),
                "tool": denied.tool,
                "input": denied.input,
                "rule": denied.rule,
                "action": "deny",
                "via": "rule",
            }
        )
        return shield_notice(denied.tool, denied.input, denied.rule)


def build_sample() -> dict[str, Any]:
    """Play the scenario and return the trace dict, members in harness order (unstamped)."""
    rec = _Recorder()
    episodes: list[str] = []
    for step in STEPS:
        if isinstance(step, Episode):
            rec.episode(step, first=not episodes)
            episodes.append(step.text)
        else:
            rec.turn(step)
    assert len(rec.stack) == 1, "every delegation returned"
    return {
        "version": 2,
        "model": MODEL,
        "system": LEAD.system,
        "prompt": episodes[0],
        "episodes": episodes,
        "output": rec.output,
        "truncated": False,
        "paused": False,
        "pending": None,
        "pending_depth": 0,
        "stop_reason": "",
        "log": rec.log,
        "systems": rec.systems,
        # Not written by the harness itself: the shield is a proxy feature (§1.6). The
        # sample carries one decision so the desktop's shield view has something to show.
        "shield_events": rec.shield_events,
    }


def write_sample(path: str | Path) -> dict[str, Any]:
    """Build and write the sample through the atomic, checksum-stamping writer."""
    return save_dict(build_sample(), path)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    force = "--force" in args
    args = [a for a in args if a != "--force"]
    if len(args) != 1:
        print("usage: python -m loom_core.demo.sample OUT [--force]", file=sys.stderr)
        return 2
    if not force and Path(args[0]).exists():  # `make sample` says --force: it regenerates
        print(
            f"error: {args[0]}: already exists; nothing was written (pass --force to replace it)",
            file=sys.stderr,
        )
        return 2
    data = write_sample(args[0])
    print(f"wrote {args[0]}: {len(data['log'])} effects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
