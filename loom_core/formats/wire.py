"""Turn recorded HTTP exchanges into loom effects (loom-format.md §6.3, §6.4).

The same algorithm serves converting a crashed proxy's ``.wirelog`` and our own
recording proxy (:mod:`loom_core.proxy`): every exchange (request, final response)
appends the tool effects for results that first appear in the request, then one
model effect for the response. Anthropic Messages, OpenAI Chat Completions and --
unlike loom-harness, which records it as an empty Anthropic message (§13.7) -- the
OpenAI Responses API (``input`` items, ``function_call`` / ``*_call_output`` paired
by ``call_id``, ``instructions`` as the system prompt).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from loom_core.formats.canonical import proxy_model_key, proxy_tool_key
from loom_core.formats.entries import finished_run
from loom_core.formats.schema import PROXY_ORDER
from loom_core.formats.wire_response import (
    decode_args,
    dialect_of,
    is_openai,
    is_responses,
    model_dialect,
    response_to_result,
    responses_call,
)

__all__ = [  # the response side lives in .wire_response; importers of it here keep working
    "RecorderMark",
    "WireRecorder",
    "decode_args",
    "dialect_of",
    "flatten",
    "is_openai",
    "is_responses",
    "model_dialect",
    "proxy_sys_hash",
    "response_to_result",
]

_VOLATILE = re.compile(
    r"\b[\w-]*(?:version|build|revision|commit|request[_-]?id|trace[_-]?id)[\w-]*\s*[=:]\s*[\w.\-+/]+",
    re.IGNORECASE,
)
_REMINDER = re.compile(r"^\s*<(system-reminder|environment_details|context)\b", re.IGNORECASE)
# Responses API agents (Codex) send their environment/instructions as user messages
# wrapped in one tag; such a message is context, not something the user asked.
_WRAPPED = re.compile(
    r"^\s*<(environment_context|user_instructions|system-reminder|"
    r"environment_details|context)\b[\s\S]*>\s*$",
    re.IGNORECASE,
)


@lru_cache(maxsize=64)
def proxy_sys_hash(system: str) -> str:
    """sha1 of the system prompt with volatile ids removed, first 12 hex (§3.4).

    Cached: an agent resends the same (often 25 KB) prompt with every call, and the
    normalising regex over it was most of the cost of recording an exchange."""
    return hashlib.sha1(_VOLATILE.sub("", system).encode("utf-8")).hexdigest()[:12]


def flatten(content: Any) -> str:
    """Text of a content value: a string, or the concatenated ``text`` of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and isinstance(b.get("text", ""), str)
        )
    return ""


def _episode_of(content: Any) -> str:
    """The user text a message contributes (§6.4): reminders dropped unless all are."""
    if isinstance(content, str):
        return content
    texts = [
        b.get("text") or ""
        for b in content or []  # input_text: Responses API parts
        if isinstance(b, dict) and b.get("type") in ("text", "input_text") and b.get("text")
    ]
    kept = [t for t in texts if not _REMINDER.match(t)] or texts
    return kept[-1] if kept else ""


def _tool_name(tool: dict[str, Any], dialect: str) -> str:
    if dialect == "responses":  # flat function tools; built-in tools only have a type
        return str(tool.get("name") or tool.get("type") or "")
    name: str = (tool.get("function") or tool).get("name", "")  # kept as the request sent it
    return name


def _message_count(request: dict[str, Any], dialect: str) -> int:
    if dialect == "responses":
        items = request.get("input")
        return len(items) if isinstance(items, list) else int(bool(items))
    return len(request.get("messages") or [])


@dataclass(frozen=True)
class RecorderMark:
    """Where a :class:`WireRecorder` stood before an exchange (see ``rollback``)."""

    log: int
    wire: int
    events: int
    episodes: int
    systems: int
    names: int
    model: str
    system: str
    output: str


@dataclass
class WireRecorder:
    """Accumulates exchanges into the members of a proxy trace."""

    model: str = ""
    system: str = ""
    systems: dict[str, str] = field(default_factory=dict)
    episodes: list[str] = field(default_factory=list)
    output: str = ""
    log: list[dict[str, Any]] = field(default_factory=list)
    wire: list[dict[str, Any]] = field(default_factory=list)
    shield_events: list[dict[str, Any]] = field(default_factory=list)
    _names: dict[str, str] = field(default_factory=dict)
    _seen_results: set[str] = field(default_factory=set)

    def _add(self, kind: str, key: str, result: Any, meta: dict[str, Any]) -> None:
        self.log.append(
            {
                "seq": len(self.log),
                "kind": kind,
                "key": key,
                "result": result,
                "depth": 0,
                "meta": meta,
            }
        )

    def _tool_result(self, tuid: str, content: Any) -> None:
        if not tuid or tuid in self._seen_results:
            return
        self._seen_results.add(tuid)
        kind = "tool:" + self._names.get(tuid, "tool")
        self._add(kind, proxy_tool_key(kind, tuid), flatten(content), {"tuid": tuid})

    def _episode(self, text: str) -> None:
        if text and text not in self.episodes:
            self.episodes.append(text)

    def _scan_responses(self, request: dict[str, Any]) -> str:
        """Responses API request: ``instructions`` + ``input`` (a string or a list of items)."""
        items = request.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        system = ""
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            kind, role = str(item.get("type") or "message"), item.get("role")
            if kind.endswith("_call_output"):
                self._tool_result(str(item.get("call_id") or ""), item.get("output"))
            elif kind.endswith("_call") and item.get("call_id"):  # replayed history
                self._names.setdefault(str(item["call_id"]), responses_call(item)["name"])
            elif kind == "message" and role in ("system", "developer"):
                system = flatten(item.get("content"))
            elif kind == "message" and role == "user":
                text = _episode_of(item.get("content"))
                if not _WRAPPED.match(text):
                    self._episode(text)
        instructions = request.get("instructions")
        return instructions if isinstance(instructions, str) and instructions else system

    def _scan(self, request: dict[str, Any], openai: bool) -> str:
        system = "" if openai else flatten(request.get("system"))
        for msg in request.get("messages") or []:
            if not isinstance(msg, dict):
                continue
            role, content = msg.get("role"), msg.get("content")
            if openai and role in ("system", "developer"):
                system = flatten(content)
            elif openai and role == "tool":
                self._tool_result(msg.get("tool_call_id") or "", content)
            elif role == "user":
                if not openai and isinstance(content, list):
                    for block in content:
                        if isinstance(block, dict) and block.get("type") == "tool_result":
                            self._tool_result(block.get("tool_use_id") or "", block.get("content"))
                self._episode(flatten(content) if openai else _episode_of(content))
        return system

    def record(
        self,
        request: dict[str, Any],
        response: dict[str, Any],
        shield_events: list[dict[str, Any]] | None = None,
    ) -> None:
        """Append one successful exchange (request as forwarded, response as delivered)."""
        dialect = dialect_of(response)
        if request.get("model"):
            self.model = str(request["model"])
        if dialect == "responses":
            system = self._scan_responses(request)
        else:
            system = self._scan(request, dialect == "openai")
        sys_hash = proxy_sys_hash(system)
        if system:
            self.system = system
            self.systems.setdefault(sys_hash, system)
        tools = sorted(
            _tool_name(t, dialect) for t in request.get("tools") or [] if isinstance(t, dict)
        )
        meta = {
            "sys_hash": sys_hash,
            "sys_head": system[:160],
            "tools": tools,
            "model": request.get("model", ""),
            "msgs": _message_count(request, dialect),
        }
        result = response_to_result(response)
        for call in result["tool_calls"]:
            self._names[call["id"]] = call["name"]
        self._add("model", proxy_model_key(len(self.wire)), result, meta)
        if result["text"]:
            self.output = result["text"]
        self.wire.append(response)
        self.shield_events.extend(shield_events or [])

    def mark(self) -> RecorderMark:
        """A cheap mark to :meth:`rollback` to (sizes and scalars, nothing copied)."""
        return RecorderMark(
            len(self.log),
            len(self.wire),
            len(self.shield_events),
            len(self.episodes),
            len(self.systems),
            len(self._names),
            self.model,
            self.system,
            self.output,
        )

    def rollback(self, mark: RecorderMark) -> None:
        """Forget every exchange recorded since ``mark`` (a recording proxy could not
        write it). Lists and dicts only grow (dicts in insertion order), and the tool
        results seen are the tool effects' ids; a call id a later response reused keeps
        that response's tool name (ids are unique per API, so this does not happen)."""
        for entry in self.log[mark.log :]:
            if entry["kind"].startswith("tool:"):
                self._seen_results.discard(entry["meta"]["tuid"])
        del self.log[mark.log :], self.wire[mark.wire :], self.shield_events[mark.events :]
        del self.episodes[mark.episodes :]
        for members, keep in ((self.systems, mark.systems), (self._names, mark.names)):
            for key in list(members)[keep:]:
                del members[key]
        self.model, self.system, self.output = mark.model, mark.system, mark.output

    def to_trace(self) -> dict[str, Any]:
        """The proxy trace members in loom-harness's order (checksum added on save)."""
        episodes = self.episodes or [""]
        members = {
            **finished_run(self.model, self.system, episodes, self.output),
            "recorded_via": "proxy",
            "systems": dict(self.systems),
            "log": list(self.log),
            "wire": list(self.wire),
            "shield_events": list(self.shield_events),
        }
        return {k: members[k] for k in PROXY_ORDER if k in members}
