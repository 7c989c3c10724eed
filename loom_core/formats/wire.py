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
from loom_core.formats.structs import PROXY_ORDER
from loom_core.formats.wire_request import (
    DictView,
    RequestView,
    flatten,
    message_count,
    scan,
    tool_names,
)
from loom_core.formats.wire_response import (
    decode_args,
    dialect_of,
    is_openai,
    is_responses,
    model_dialect,
    response_to_result,
)

__all__ = [  # the request and response sides live in .wire_request and .wire_response
    "Known",
    "RecorderMark",
    "RequestView",
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


@lru_cache(maxsize=64)
def proxy_sys_hash(system: str) -> str:
    """sha1 of the system prompt with volatile ids removed, first 12 hex (§3.4).

    Cached: an agent resends the same (often 25 KB) prompt with every call, and the
    normalising regex over it was most of the cost of recording an exchange."""
    return hashlib.sha1(_VOLATILE.sub("", system).encode("utf-8")).hexdigest()[:12]


Known = tuple[int, int]  # (exchange index, leading history items shared with it)


def _system_of(view: RequestView, dialect: str, found: tuple[int, str] | None) -> str:
    """The system prompt: Anthropic's ``system``; an OpenAI history's last system
    message; a Responses request's ``instructions``, else its last system message."""
    if dialect == "anthropic":
        return flatten(view.get("system"))
    if dialect == "responses":
        instructions = view.get("instructions")
        if isinstance(instructions, str) and instructions:
            return instructions
    return found[1] if found else ""


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
    # per exchange: its dialect and its last system history item (index, text), if any
    _found: list[tuple[str, tuple[int, str] | None]] = field(default_factory=list)

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

    def record(
        self,
        request: dict[str, Any] | RequestView,
        response: dict[str, Any],
        shield_events: list[dict[str, Any]] | None = None,
        known: Known | None = None,
    ) -> None:
        """Append one successful exchange (request as forwarded, response as delivered).

        ``known`` = (exchange index, item count): this request's first history items
        are those of that exchange, recorded here before, so they are not scanned
        again (a recording proxy knows it from its sidecar delta)."""
        view = DictView(request) if isinstance(request, dict) else request
        dialect = dialect_of(response)
        model = view.get("model")
        if model:
            self.model = str(model)
        start, found = self._known(view, dialect, known)
        for what, a, b in scan(view, dialect, start):
            if what == "tool":
                self._tool_result(a, b)
            elif what == "episode":
                if a and a not in self.episodes:
                    self.episodes.append(a)
            elif what == "name":
                self._names.setdefault(a, b)
            else:
                found = (a, b)
        self._found.append((dialect, found))
        system = _system_of(view, dialect, found)
        sys_hash = proxy_sys_hash(system)
        if system:
            self.system = system
            self.systems.setdefault(sys_hash, system)
        meta = {
            "sys_hash": sys_hash,
            "sys_head": system[:160],
            "tools": tool_names(view, dialect),
            "model": view.get("model", ""),
            "msgs": message_count(view, dialect),
        }
        result = response_to_result(response)
        for call in result["tool_calls"]:
            self._names[call["id"]] = call["name"]
        self._add("model", proxy_model_key(len(self.wire)), result, meta)
        if result["text"]:
            self.output = result["text"]
        self.wire.append(response)
        self.shield_events.extend(shield_events or [])

    def _known(
        self, view: RequestView, dialect: str, known: Known | None
    ) -> tuple[int, tuple[int, str] | None]:
        """Where the scan starts, and the last system item before that point."""
        if known is None or known[0] >= len(self._found) or not known[1]:
            return 0, None
        base_dialect, found = self._found[known[0]]
        if base_dialect != dialect:
            return 0, None
        start = known[1]
        if found is None or found[0] < start:
            return start, found  # the last system item of the shared prefix, if any
        for what, i, text in scan(view, dialect):  # it was after the prefix: the prefix's
            if what == "system" and i < start:  # last one, if any
                found = (i, text)
        return start, found if found[0] < start else None

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
        del self._found[mark.wire :]
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
