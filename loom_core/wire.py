"""Turn recorded HTTP exchanges into loom effects (loom-format.md §6.3, §6.4).

The same algorithm serves converting a crashed proxy's ``.wirelog`` and, later,
our own recording proxy: every exchange (request, final response) appends the
tool effects for results that first appear in the request, then one model effect
for the response. Both Anthropic Messages and OpenAI Chat Completions shapes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from .canonical import proxy_model_key, proxy_tool_key

_VOLATILE = re.compile(
    r"\b[\w-]*(?:version|build|revision|commit|request[_-]?id|trace[_-]?id)[\w-]*\s*[=:]\s*[\w.\-+/]+",
    re.IGNORECASE,
)
_REMINDER = re.compile(r"^\s*<(system-reminder|environment_details|context)\b", re.IGNORECASE)


def proxy_sys_hash(system: str) -> str:
    """sha1 of the system prompt with volatile ids removed, first 12 hex (§3.4)."""
    return hashlib.sha1(_VOLATILE.sub("", system).encode("utf-8")).hexdigest()[:12]


def flatten(content: Any) -> str:
    """Text of a content value: a string, or the concatenated ``text`` of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict)
                       and isinstance(b.get("text", ""), str))
    return ""


def is_openai(response: dict[str, Any]) -> bool:
    """The dialect is decided from the response shape, like loom-harness does."""
    return "choices" in response


def _decode_args(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def response_to_result(response: dict[str, Any]) -> dict[str, Any]:
    """The model effect ``result`` for one (final, screened) response (§1.4)."""
    if is_openai(response):
        choices = response.get("choices") or [{}]
        message = (choices[0] or {}).get("message") or {}
        text = message.get("content") if isinstance(message.get("content"), str) else ""
        calls = [{"id": c.get("id") or "", "name": (c.get("function") or {}).get("name") or "",
                  "input": _decode_args((c.get("function") or {}).get("arguments"))}
                 for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        usage = response.get("usage") or {}
        tokens = {"input_tokens": usage.get("prompt_tokens", 0) or 0,
                  "output_tokens": usage.get("completion_tokens", 0) or 0}
    else:
        blocks = [b for b in response.get("content") or [] if isinstance(b, dict)]
        text = "".join(b.get("text") or "" for b in blocks if b.get("type") == "text")
        calls = [{"id": b.get("id") or "", "name": b.get("name") or "",
                  "input": b.get("input") if isinstance(b.get("input"), dict) else {}}
                 for b in blocks if b.get("type") == "tool_use"]
        usage = response.get("usage") or {}
        tokens = {"input_tokens": usage.get("input_tokens", 0) or 0,
                  "output_tokens": usage.get("output_tokens", 0) or 0}
    return {"text": text, "tool_calls": calls,
            "stop_reason": "tool_use" if calls else "end_turn", "usage": tokens}


def _episode_of(content: Any) -> str:
    """The user text a message contributes (§6.4): reminders dropped unless all are."""
    if isinstance(content, str):
        return content
    texts = [b.get("text") or "" for b in content or []
             if isinstance(b, dict) and b.get("type") == "text" and b.get("text")]
    kept = [t for t in texts if not _REMINDER.match(t)] or texts
    return kept[-1] if kept else ""


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
        self.log.append({"seq": len(self.log), "kind": kind, "key": key,
                         "result": result, "depth": 0, "meta": meta})

    def _tool_result(self, tuid: str, content: Any) -> None:
        if not tuid or tuid in self._seen_results:
            return
        self._seen_results.add(tuid)
        kind = "tool:" + self._names.get(tuid, "tool")
        self._add(kind, proxy_tool_key(kind, tuid), flatten(content), {"tuid": tuid})

    def _episode(self, text: str) -> None:
        if text and text not in self.episodes:
            self.episodes.append(text)

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

    def record(self, request: dict[str, Any], response: dict[str, Any],
               shield_events: list[dict[str, Any]] | None = None) -> None:
        """Append one successful exchange (request as forwarded, response as delivered)."""
        openai = is_openai(response)
        if request.get("model"):
            self.model = str(request["model"])
        system = self._scan(request, openai)
        sys_hash = proxy_sys_hash(system)
        if system:
            self.system = system
            self.systems.setdefault(sys_hash, system)
        tools = sorted((t.get("function") or t).get("name", "") for t in request.get("tools") or []
                       if isinstance(t, dict))
        meta = {"sys_hash": sys_hash, "sys_head": system[:160], "tools": tools,
                "model": request.get("model", ""), "msgs": len(request.get("messages") or [])}
        result = response_to_result(response)
        for call in result["tool_calls"]:
            self._names[call["id"]] = call["name"]
        self._add("model", proxy_model_key(len(self.wire)), result, meta)
        if result["text"]:
            self.output = result["text"]
        self.wire.append(response)
        self.shield_events.extend(shield_events or [])

    def to_trace(self) -> dict[str, Any]:
        """The proxy trace members in loom-harness's order (checksum added on save)."""
        episodes = self.episodes or [""]
        return {
            "version": 2, "recorded_via": "proxy", "model": self.model, "system": self.system,
            "systems": dict(self.systems), "prompt": episodes[0], "episodes": episodes,
            "output": self.output, "truncated": False, "paused": False, "pending": None,
            "pending_depth": 0, "stop_reason": "", "log": list(self.log), "wire": list(self.wire),
            "shield_events": list(self.shield_events),
        }
