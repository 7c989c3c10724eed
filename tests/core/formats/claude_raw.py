"""Counts of a Claude Code session made from its raw lines alone -- never with our reader.

What a session holds, by the rules the real-world corpus's README states: one response per
``message.id`` (its usage from the LAST line of that id: Claude Code writes a response as
several lines repeating it), each ``tool_result`` a tool step except a Task/Agent result
whose sub-agent's own lines are there (its steps stand for it), sub-agents (``isSidechain``
lines, ``subagents/agent-*.jsonl`` files) one level deeper, and each ``compact_boundary``
a compaction whose call (``subagents/agent-acompact-*.jsonl``) is billed like any call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOKENS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
SUBAGENT_TOOLS = ("Task", "Agent")


def lines(path: Path) -> list[dict[str, Any]]:
    """Every JSON object line, each uuid once (a resumed session repeats lines)."""
    out, seen = [], set()
    for text in path.read_text(encoding="utf-8").splitlines():
        if not text.strip():
            continue
        rec = json.loads(text)
        if rec.get("uuid") in seen:
            continue
        seen.add(rec.get("uuid"))
        out.append(rec)
    return out


def content(rec: dict[str, Any]) -> list[dict[str, Any]]:
    found = (rec.get("message") or {}).get("content")
    return [b for b in found if isinstance(b, dict)] if isinstance(found, list) else []


@dataclass
class Session:
    """What one session and its folder hold."""

    models: dict[int, int] = field(default_factory=lambda: {0: 0, 1: 0})  # depth -> responses
    tools: dict[int, int] = field(default_factory=lambda: {0: 0, 1: 0})  # depth -> results
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKENS, 0))
    compactions: int = 0
    compaction_tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKENS, 0))
    output: str = ""


def _responses(recs: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """(sidechain, agent, message id) -> the last line of that response, in file order."""
    last: dict[tuple[Any, ...], dict[str, Any]] = {}
    for rec in recs:
        if rec.get("type") == "assistant":
            msg = rec.get("message") or {}
            last[(rec.get("isSidechain") is True, rec.get("agentId"), msg.get("id"))] = rec
    return last


def _add(into: dict[str, int], rec: dict[str, Any]) -> None:
    usage = (rec.get("message") or {}).get("usage") or {}
    for key in TOKENS:
        into[key] += usage.get(key) or 0


def count(main: Path) -> Session:
    """The session at ``main`` and the files of its folder."""
    out = Session()
    recs = lines(main)
    folder = main.with_suffix("") / "subagents"
    files = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    agents = {p.stem[len("agent-") :] for p in files if "acompact" not in p.name}
    for key, rec in _responses(recs).items():
        out.models[1 if key[0] else 0] += 1
        _add(out.tokens, rec)
    for path in files:
        for rec in _responses(lines(path)).values():
            if "acompact" in path.name:
                _add(out.compaction_tokens, rec)
            else:
                out.models[1] += 1
            _add(out.tokens, rec)
        if "acompact" not in path.name:
            out.tools[1] += sum(
                b.get("type") == "tool_result" for r in lines(path) for b in content(r)
            )
    out.tools[0], out.tools[1] = _results(recs, agents, out.tools[1])
    out.compactions = sum(r.get("subtype") == "compact_boundary" for r in recs)
    out.output = _last_answer(recs)
    return out


def _results(recs: list[dict[str, Any]], agents: set[str], deep: int) -> tuple[int, int]:
    """Tool results at depth 0 and 1: a Task/Agent result whose sub-agent is in a file of
    the folder (it names its ``agentId``), or whose prompt started an inline sidechain, is
    no tool step."""
    calls = {b.get("id"): b for r in recs for b in content(r) if b.get("type") == "tool_use"}
    roots = {
        "\n".join(b.get("text", "") for b in content(r)) or (r.get("message") or {}).get("content")
        for r in recs
        if r.get("isSidechain") is True and r.get("type") == "user" and not r.get("parentUuid")
    }
    top = 0
    for rec in recs:
        for block in content(rec):
            if block.get("type") != "tool_result":
                continue
            if rec.get("isSidechain") is True:
                deep += 1
                continue
            call = calls.get(block.get("tool_use_id")) or {}
            result = rec.get("toolUseResult")
            agent = result.get("agentId") if isinstance(result, dict) else None
            inline = (call.get("input") or {}).get("prompt") in roots
            top += not (call.get("name") in SUBAGENT_TOOLS and (agent in agents or inline))
    return top, deep


def _last_answer(recs: list[dict[str, Any]]) -> str:
    """The text of the last top-level response that has text (all its lines' text blocks)."""
    texts: dict[Any, list[str]] = {}
    for rec in recs:
        if rec.get("type") == "assistant" and rec.get("isSidechain") is not True:
            said = [b["text"] for b in content(rec) if b.get("type") == "text" and b.get("text")]
            texts.setdefault((rec.get("message") or {}).get("id"), []).extend(said)
    return next(("\n".join(t) for t in reversed(texts.values()) if t), "")
