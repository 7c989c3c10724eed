"""Forking a branch again: contexts restored from ``edit`` snapshots, settings from ``fork``.

Why: a branch's live tail starts from the edited context its ``edit`` effect holds
(§1.3), not from what the log alone would suggest. The harness-style context walk
already restores it; a proxy-style walk does not know ``edit`` effects (the proxy
never records one), so for proxy branches the context is rebuilt here: the last
snapshot of the fork step's agent, then that agent's later replies and results.
A model re-run branch also stored its request settings (tools with their schemas,
max_tokens, temperature) in ``fork.request``; a fork inside its tail reuses them.
"""

from __future__ import annotations

from typing import Any

from loom_core.fork.items import assistant_item, normal_item, tool_item
from loom_core.formats.document import Document, text_and_calls

Restored = tuple[list[dict[str, Any]], list[int | None]]


def _agent_edit(doc: Document, index: int) -> int | None:
    """The last ``edit`` before ``index`` whose next model call is this step's agent."""
    agent = doc.meta(index).sys_hash
    for i in range(index - 1, -1, -1):
        if doc.effects[i].kind != "edit":
            continue
        nxt = next((k for k in range(i + 1, index + 1) if doc.effects[k].kind == "model"), None)
        if nxt is not None and doc.meta(nxt).sys_hash == agent:
            return i
    return None


def proxy_snapshot_context(doc: Document, index: int) -> Restored | None:
    """(Items, origin seqs) at proxy model step ``index`` when an ``edit`` shaped it."""
    at = _agent_edit(doc, index)
    if at is None:
        return None
    snap = doc.result(at)
    items = [normal_item(d) for d in snap if isinstance(d, dict)] if isinstance(snap, list) else []
    by_tuid = {
        doc.meta(k).tuid: doc.effects[k].seq
        for k in range(at)
        if (doc.effects[k].kind or "").startswith("tool:") and doc.meta(k).tuid
    }
    origins: list[int | None] = [
        by_tuid.get(it["tool_call_id"]) if it["role"] == "tool" else None for it in items
    ]
    agent = doc.meta(index).sys_hash
    waiting: dict[str, dict[str, Any]] = {}
    for k in range(at + 1, index):
        eff, meta = doc.effects[k], doc.meta(k)
        kind = eff.kind or ""
        if kind == "model" and meta.sys_hash == agent:
            text, calls = text_and_calls(doc.result(k))
            items.append(assistant_item(text, calls))
            waiting.update({c["id"]: c for c in items[-1]["tool_calls"]})
        elif kind.startswith("tool:") and meta.tuid in waiting:
            items.append(tool_item(waiting.pop(str(meta.tuid)), doc.result(k), "proxy"))
        else:
            continue
        origins.append(eff.seq)
    return items, origins


def branch_request(doc: Document, index: int) -> dict[str, Any] | None:
    """A model re-run branch's stored request settings, for a step in its live tail."""
    fork = getattr(doc.header, "fork", None)
    if not isinstance(fork, dict) or fork.get("mode") != "model":
        return None
    prefix, request = fork.get("prefix"), fork.get("request")
    if not isinstance(prefix, int) or index <= prefix or not isinstance(request, dict):
        return None
    return request
