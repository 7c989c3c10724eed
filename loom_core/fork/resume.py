"""Continue a saved branch: supply a pending tool result, proceed past a stop, or stop it.

Why everything comes from the file: a paused branch may be resumed days later, in
another process, after the app restarted. The ``edit`` effect holds the context at
the fork point; each later effect adds exactly one Item (an assistant turn or a tool
result, paired with its reply's calls in order), so the live context is rebuilt
exactly. The request settings, limits and the parent's path live in ``fork``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loom_core.errors import LoadError
from loom_core.fork.branch import Branch, dumps_safe
from loom_core.fork.items import assistant_item, normal_item, tool_item
from loom_core.fork.point import find_model_effect
from loom_core.fork.recorded import RecordedResults, recorded_calls
from loom_core.fork.rerun import DEFAULT_MAX_TURNS, ForkResult, LiveState, OnEffect, Runner
from loom_core.formats.document import Document, text_and_calls
from loom_core.formats.loader import load, read_bytes
from loom_core.providers.base import CancelToken, Provider, ToolSpec

_NOTHING: Any = object()
FINISHED = ("done", "stopped")


def load_branch(path: str | Path) -> Branch:
    """Read a saved branch (LoadError for an unreadable file, ValueError for a non-branch)."""
    data = read_bytes(path)
    try:
        value = json.loads(data)
    except ValueError as err:
        raise LoadError(path, f"not valid JSON ({err})") from err
    if not isinstance(value, dict):
        raise LoadError(path, "not a loom trace (expected a JSON object)")
    return Branch.from_dict(value, str(path))


def rebuild(branch: Branch) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the live context Items, the last reply's calls that have no result yet)."""
    tail = branch.tail
    if not tail or tail[0].get("kind") != "edit" or not isinstance(tail[0].get("result"), list):
        raise ValueError("the branch's tail does not start with its edit effect")
    items = [normal_item(d) for d in tail[0]["result"] if isinstance(d, dict)]
    waiting: list[dict[str, Any]] = []
    for entry in tail[1:]:
        kind = str(entry.get("kind") or "")
        if kind == "model":
            text, calls = text_and_calls(entry.get("result"))
            items.append(assistant_item(text, calls))
            waiting = list(items[-1]["tool_calls"])
        elif (kind.startswith("tool:") or kind == "human") and waiting:
            items.append(tool_item(waiting.pop(0), entry.get("result"), branch.style))
    return items, waiting


def _parent(branch: Branch, parent: Document | None) -> Document:
    if parent is not None:
        return parent
    info = branch.provenance.get("parent") or {}
    doc = load(str(info.get("path") or ""))
    if info.get("checksum") and doc.header.checksum != info["checksum"]:
        raise ValueError(
            f"{doc.path}: the parent trace changed since the branch was forked "
            f"(checksum differs); its recorded tool results cannot be trusted"
        )
    return doc


def resume_fork(
    branch_path: str | Path,
    provider: Provider,
    *,
    tool_result: Any = _NOTHING,
    stop: bool = False,
    out: str | Path | None = None,
    parent: Document | None = None,
    max_turns: int | None = None,
    budget_tokens: int | None = None,
    cancel: CancelToken | None = None,
    on_effect: OnEffect | None = None,
) -> ForkResult:
    """Continue the branch at ``branch_path`` (rewritten in place unless ``out``).

    ``tool_result`` answers the pending call (recorded with meta ``supplied: true``);
    ``stop`` ends a paused branch as ``stopped`` without calling anything. A branch
    stopped by ``max_turns``/``budget``/cancel/error simply continues (pass larger
    limits to get further). ValueError when the request does not fit the branch.
    """
    branch = load_branch(branch_path)
    prov = branch.provenance
    status = prov.get("status")
    target = str(out if out is not None else branch_path)
    if status in FINISHED:
        raise ValueError(f"{branch_path}: the branch is {status}; nothing to resume")
    pending = prov.get("pending_call") if status == "needs_tool_result" else None
    if pending is not None and tool_result is _NOTHING and not stop:
        raise ValueError(
            f"{branch_path}: the branch waits for a result of "
            f"{pending.get('name')}({json.dumps(pending.get('input'))}); "
            f"supply one or stop it"
        )
    if tool_result is not _NOTHING and pending is None:
        raise ValueError(f"{branch_path}: the branch is {status}, not waiting for a tool result")
    items, waiting = rebuild(branch)
    runner = _runner(
        branch, items, provider, parent, max_turns, budget_tokens, cancel, on_effect, target
    )
    if stop:
        runner.pending = pending
        return runner.finish("stopped", None)
    if pending is not None:
        if not waiting or waiting[0].get("id") != pending.get("id"):
            raise ValueError(f"{branch_path}: the pending call is not the next unanswered call")
        call = waiting.pop(0)
        runner.record_result(
            call, branch.result_kind(call["name"]), dumps_safe(tool_result), {"supplied": True}
        )
    prov["provider"] = provider.name
    return runner.run(waiting)


def _runner(
    branch: Branch,
    items: list[dict[str, Any]],
    provider: Provider,
    parent: Document | None,
    max_turns: int | None,
    budget_tokens: int | None,
    cancel: CancelToken | None,
    on_effect: OnEffect | None,
    out: str,
) -> Runner:
    prov = branch.provenance
    doc = _parent(branch, parent)
    calls = recorded_calls(doc, find_model_effect(doc, int(prov["step"])))
    used = [
        m["from_parent"]
        for m in (e.get("meta") or {} for e in branch.tail)
        if isinstance(m.get("from_parent"), int)
    ]
    req = prov.get("request") or {}
    state = LiveState(
        str(req.get("system") or ""),
        items,
        [ToolSpec(**t) for t in req.get("tools") or []],
        str(prov.get("model") or ""),
        req.get("max_tokens"),
        req.get("temperature"),
    )
    if max_turns is not None:
        prov["max_turns"] = max_turns
    if budget_tokens is not None:
        prov["budget_tokens"] = budget_tokens
    return Runner(
        branch,
        state,
        provider,
        RecordedResults(calls, used),
        int(prov.get("max_turns") or DEFAULT_MAX_TURNS),
        prov.get("budget_tokens"),
        cancel,
        on_effect,
        out,
    )
