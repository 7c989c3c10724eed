"""A fork's branch as an ordinary loom trace, plus our ``fork`` provenance member.

Layout (loom-format.md §1, §10.3): the parent's effects before the fork model step,
copied unchanged (seq, key, result, meta); then an ``edit`` effect whose result is
the full edited context (key ``{"turn": t}``) right before the first live model call;
then the live tail with dense seqs. New keys follow §3 in the parent's style --
harness keys hash what was sent (tools with the schemas we know), proxy keys hash
the exchange index -- so loom-harness and our own views read the branch like any run.

Proxy parents: ``recorded_via``, the prefix's ``wire`` responses and the prefix's
``shield_events`` are kept; the tail came from a provider, not through a proxy, so
it adds no ``wire`` entries (none were received by a client) and no shield events.
``wire`` therefore covers the replayed prefix only, recorded as ``fork.wire``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loom_core.fork.items import harness_messages, harness_tools
from loom_core.formats.canonical import (
    effect_key,
    harness_sys_hash,
    proxy_model_key,
    proxy_tool_key,
)
from loom_core.formats.document import text_and_calls
from loom_core.formats.save import save_dict
from loom_core.formats.structs import HARNESS_ORDER, PROXY_ORDER
from loom_core.formats.wire import proxy_sys_hash
from loom_core.providers.base import ModelReply, ModelRequest

MODE = "model"
# parent members a branch must not inherit: stamps, claims about the whole file, old provenance
_DROPPED = {
    "checksum",
    "signature",
    "scrubbed",
    "healed_by",
    "fork",
    "user_turns",
    "fork_injections",
    "log",
    "wire",
    "shield_events",
}
_STOP_REASON = {"budget": "budget", "max_turns": "max_steps"}


@dataclass
class Branch:
    """The branch being written: header members, copied prefix, live tail, provenance."""

    style: str  # "harness" | "proxy"
    header: dict[str, Any]
    prefix: list[dict[str, Any]]
    provenance: dict[str, Any]
    tail: list[dict[str, Any]] = field(default_factory=list)
    wire: list[Any] | None = None
    shield_events: list[Any] | None = None

    # -- effects ------------------------------------------------------------------------
    @property
    def log(self) -> list[dict[str, Any]]:
        return self.prefix + self.tail

    @property
    def agent(self) -> str:
        return str(self.provenance.get("agent") or "")

    def add(self, kind: str, key: str, result: Any, meta: dict[str, Any] | None) -> dict[str, Any]:
        """Append an effect with the next dense seq; returns the entry."""
        entry: dict[str, Any] = {
            "seq": len(self.prefix) + len(self.tail),
            "kind": kind,
            "key": key,
            "result": result,
            "depth": 0,
        }
        if meta:
            entry["meta"] = meta
        self.tail.append(entry)
        return entry

    def add_edit(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        turn = int(self.provenance["turn"])
        meta = {"agent": self.agent} if self.style == "harness" and self.agent else None
        return self.add("edit", effect_key("edit", {"turn": turn}), items, meta)

    def add_model(self, request: ModelRequest, reply: ModelReply) -> dict[str, Any]:
        system = request.system
        if self.style == "proxy":
            n = sum(1 for e in self.log if e.get("kind") == "model")
            key = proxy_model_key(n)
            meta: dict[str, Any] = {
                "sys_hash": proxy_sys_hash(system),
                "sys_head": system[:160],
                "tools": sorted(t.name for t in request.tools),
                "model": request.model,
                "msgs": len(request.messages),
            }
        else:
            key = effect_key(
                "model",
                {
                    "system": system,
                    "messages": harness_messages(request.messages),
                    "tools": harness_tools(request.tools),
                },
            )
            meta = {"agent": self.agent} if self.agent else {}
            if system:
                meta.update(sys_hash=harness_sys_hash(system), sys_head=system[:160])
        return self.add("model", key, reply.result(), meta)

    def add_tool(
        self, call: dict[str, Any], kind: str, value: Any, extra: dict[str, Any]
    ) -> dict[str, Any]:
        """A tool (or ``human``) result for ``call``; ``extra`` says where it came from."""
        if self.style == "proxy":
            key, meta = proxy_tool_key(kind, call["id"]), {"tuid": call["id"], **extra}
        else:
            payload = (
                {"question": call["input"].get("question")}
                if kind == "human"
                else {"id": call["id"], "input": call["input"]}
            )
            key = effect_key(kind, payload)
            meta = {**({"agent": self.agent} if self.agent else {}), **extra}
        return self.add(kind, key, value, meta)

    def result_kind(self, name: str) -> str:
        """The kind a result for a call of ``name`` is recorded as (§1.3)."""
        return "human" if name == "ask_human" and self.style == "harness" else f"tool:{name}"

    # -- the document -------------------------------------------------------------------
    def output(self) -> str:
        """The last non-empty top-level model text (what ``loom trace validate`` expects)."""
        for entry in reversed(self.log):
            if entry.get("kind") == "model" and not entry.get("depth"):
                text = text_and_calls(entry.get("result"))[0]
                if text:
                    return text
        return ""

    def to_dict(self) -> dict[str, Any]:
        status = self.provenance.get("status", "running")
        h = dict(self.header)
        h.update(
            output=self.output(),
            truncated=status != "done",
            paused=False,
            pending=None,
            pending_depth=0,
            stop_reason=_STOP_REASON.get(status, ""),
        )
        system = str((self.provenance.get("request") or {}).get("system") or "")
        if self.provenance.get("model"):
            h["model"] = self.provenance["model"]
        if system or self.style == "harness":
            h["system"] = system
        if system:
            sys_hash = proxy_sys_hash(system) if self.style == "proxy" else harness_sys_hash(system)
            h["systems"] = {**(h.get("systems") or {}), sys_hash: system}
        bulk = {"log": self.log, "wire": self.wire or [], "shield_events": self.shield_events or []}
        order = PROXY_ORDER if self.style == "proxy" else HARNESS_ORDER
        data: dict[str, Any] = {}
        for k in order:
            if k in bulk and (k == "log" or self.style == "proxy"):
                data[k] = bulk[k]
            elif k in h:
                data[k] = h[k]
        data.update({k: v for k, v in h.items() if k not in data})
        data["fork"] = self.provenance
        return data

    def save(self, path: str | Path) -> dict[str, Any]:
        """Stamp and write atomically; returns what was written."""
        return save_dict(self.to_dict(), path)

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str) -> Branch:
        """A saved model-mode branch, ready to continue (ValueError if it is not one)."""
        prov = data.get("fork")
        if not isinstance(prov, dict) or prov.get("mode") != MODE:
            raise ValueError(f"{path}: not a branch written by a model re-run fork")
        log = data.get("log")
        p = prov.get("prefix")
        if not isinstance(log, list) or not isinstance(p, int) or not 0 <= p < len(log):
            raise ValueError(f"{path}: the branch's log does not match its fork provenance")
        style = "proxy" if data.get("recorded_via") == "proxy" else "harness"
        header = {k: v for k, v in data.items() if k not in _DROPPED}
        return cls(
            style,
            header,
            log[:p],
            dict(prov),
            log[p:],
            data.get("wire") if style == "proxy" else None,
            data.get("shield_events") if style == "proxy" else None,
        )


def new_provenance(
    parent_path: str | Path,
    parent_checksum: str | None,
    *,
    step: int,
    turn: int,
    prefix: int,
    edit: dict[str, Any],
    reason: str,
    provider: str,
    model: str,
    source: str,
    agent: str,
) -> dict[str, Any]:
    """The ``fork`` member: where the branch came from and how to continue it."""
    return {
        "parent": {"path": os.path.abspath(str(parent_path)), "checksum": parent_checksum},
        "step": step,
        "turn": turn,
        "edit": edit,
        "reason": reason,
        "mode": MODE,
        "provider": provider,
        "model": model,
        "status": "running",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": source,
        "agent": agent,
        "prefix": prefix,
    }


def parent_header(data: dict[str, Any], episodes: list[str]) -> dict[str, Any]:
    """The parent's top-level members a branch starts from, episodes cut to the prefix."""
    header = {k: v for k, v in data.items() if k not in _DROPPED}
    header["version"] = 2
    header["episodes"] = list(episodes)
    header["prompt"] = episodes[0] if episodes else ""
    return header


def dumps_safe(value: Any) -> Any:
    """``value`` made JSON-safe the way the harness stores results (non-JSON -> ``str``)."""
    return json.loads(json.dumps(value, default=str))
