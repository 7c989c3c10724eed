"""Fork mode's wire half: the content identity of a model request, and edits applied to
a request in its own dialect (Anthropic Messages, Chat Completions, Responses).

Why apart from :mod:`.forkmode`: these are pure functions over request dicts (no
server, no state), tested on their own; the fork source only decides *when* to use
them. See :mod:`.forkmode` for what is matched and which edit goes where.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from loom_core.fork.edits import Edit
from loom_core.formats.wire import flatten, proxy_sys_hash

UNSUPPORTED = ("messages", "tools")  # Edit members an agent re-run cannot apply


class ForkError(ValueError):
    """The parent cannot be forked as asked; the message names the file and the cause."""


def _args(value: Any) -> Any:
    """Tool-call arguments as an object (Chat / Responses send them as a JSON string)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _turn(role: Any, text: str) -> dict[str, Any]:
    return {"role": str(role or ""), "text": text, "calls": [], "results": []}


def _responses_turns(request: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    items = request.get("input")
    items = [{"role": "user", "content": items}] if isinstance(items, str) else items or []
    instructions = request.get("instructions")
    system, turns = instructions if isinstance(instructions, str) else "", []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("type") or "message")
        if kind == "message" and item.get("role") in ("system", "developer"):
            system = system or flatten(item.get("content"))
        elif kind == "message":
            turns.append(_turn(item.get("role"), flatten(item.get("content"))))
        elif kind.endswith("_call_output"):
            turn = _turn("tool", "")
            out = item.get("output")
            turn["results"].append(
                [item.get("call_id"), out if isinstance(out, str) else flatten(out)]
            )
            turns.append(turn)
        else:
            turn = _turn("assistant", "")
            if kind.endswith("_call"):
                turn["calls"].append(
                    [
                        item.get("call_id"),
                        item.get("name") or kind,
                        _args(item.get("arguments", item.get("input"))),
                    ]
                )
            turns.append(turn)
    return system, turns


def conversation(request: dict[str, Any], dialect: str) -> tuple[str, list[dict[str, Any]]]:
    """(system, turns) of a request in neutral form; each turn is ``{role, text,
    calls: [[id, name, input]], results: [[id, text]]}``. Used for matching and for
    the branch's ``edit`` snapshot."""
    if dialect == "responses":
        return _responses_turns(request)
    system = "" if dialect == "openai" else flatten(request.get("system"))
    turns = []
    for msg in request.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        role, content = msg.get("role"), msg.get("content")
        if dialect == "openai" and role in ("system", "developer"):
            system = flatten(content)
            continue
        turn = _turn(role, flatten(content))
        if dialect == "openai":
            turn["calls"] = [
                [
                    c.get("id"),
                    (c.get("function") or {}).get("name"),
                    _args((c.get("function") or {}).get("arguments")),
                ]
                for c in msg.get("tool_calls") or []
                if isinstance(c, dict)
            ]
            if role == "tool":
                turn["results"], turn["text"] = [[msg.get("tool_call_id"), turn["text"]]], ""
        elif isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    turn["calls"].append([b.get("id"), b.get("name"), b.get("input")])
                elif isinstance(b, dict) and b.get("type") == "tool_result":
                    turn["results"].append([b.get("tool_use_id"), flatten(b.get("content"))])
        turns.append(turn)
    return system, turns


def request_digest(request: dict[str, Any], dialect: str) -> str:
    """The content identity of a model request (16 hex; see the module docstring)."""
    system, turns = conversation(request, dialect)
    tools = sorted(
        str((t.get("function") or t).get("name") or t.get("type") or "")
        for t in request.get("tools") or []
        if isinstance(t, dict)
    )
    text = json.dumps([proxy_sys_hash(system), turns, tools], sort_keys=True, default=str)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


# -- edits on a wire request (in place, on a copy the caller made) --------------------


def _history(request: dict[str, Any], dialect: str) -> str:
    return "input" if dialect == "responses" else "messages"


def _append_text(msg: dict[str, Any], note: str, dialect: str) -> None:
    content = msg.get("content")
    if isinstance(content, list):
        content.append({"type": "input_text" if dialect == "responses" else "text", "text": note})
    else:
        msg["content"] = f"{content}\n\n{note}" if isinstance(content, str) and content else note


def merge_note(request: dict[str, Any], dialect: str, note: str) -> tuple[str, int]:
    """Merge ``note`` into the last user turn (or add one); returns where, for re-use."""
    key = _history(request, dialect)
    items = request.get(key)
    if isinstance(items, str):  # Responses ``input`` as plain text
        request[key] = f"{items}\n\n{note}"
        return "text", 0
    if not isinstance(items, list):
        items = request[key] = []
    last = items[-1] if items else None
    if (
        isinstance(last, dict)
        and last.get("role") == "user"
        and (last.get("type") or "message") == "message"
    ):
        _append_text(last, note, dialect)
        return "merge", len(items) - 1
    items.append({"role": "user", "content": note})
    return "insert", len(items) - 1


def reapply_note(request: dict[str, Any], dialect: str, note: str, spot: tuple[str, int]) -> None:
    """Put ``note`` where :func:`merge_note` put it, in a later request of that conversation."""
    mode, index = spot
    items = request.get(_history(request, dialect))
    if not isinstance(items, list):
        return
    if (
        mode == "merge"
        and index < len(items)
        and isinstance(items[index], dict)
        and items[index].get("role") == "user"
    ):
        _append_text(items[index], note, dialect)
    elif mode == "insert" and index <= len(items):
        items.insert(index, {"role": "user", "content": note})


def set_system(request: dict[str, Any], dialect: str, text: str) -> None:
    """Replace the system prompt where this dialect keeps it."""
    if dialect == "anthropic":
        request["system"] = text
        return
    if dialect == "responses" and (
        request.get("instructions") or not isinstance(request.get("input"), list)
    ):
        request["instructions"] = text
        return
    items = request.setdefault(_history(request, dialect), [])
    for item in items:
        if isinstance(item, dict) and item.get("role") in ("system", "developer"):
            item["content"] = text
            return
    if dialect == "responses":
        request["instructions"] = text
    else:
        items.insert(0, {"role": "system", "content": text})


def redact_results(request: dict[str, Any], dialect: str, ids: set[str], text: str) -> None:
    """Replace the content of the tool results whose call id is in ``ids``."""
    for m in request.get(_history(request, dialect)) or []:
        if not isinstance(m, dict):
            continue
        if dialect == "openai" and m.get("role") == "tool" and m.get("tool_call_id") in ids:
            m["content"] = text
        elif (
            dialect == "responses"
            and str(m.get("type") or "").endswith("_call_output")
            and m.get("call_id") in ids
        ):
            m["output"] = text
        elif dialect == "anthropic" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if (
                    isinstance(b, dict)
                    and b.get("type") == "tool_result"
                    and b.get("tool_use_id") in ids
                ):
                    b["content"] = text


def set_sampling(request: dict[str, Any], dialect: str, edit: Edit) -> None:
    if edit.model:
        request["model"] = edit.model
    if edit.temperature is not None:
        request["temperature"] = edit.temperature
    if edit.max_tokens is not None:
        key = {"anthropic": "max_tokens", "responses": "max_output_tokens"}.get(dialect) or (
            "max_completion_tokens" if "max_completion_tokens" in request else "max_tokens"
        )
        request[key] = edit.max_tokens


def check_agent_edit(edit: Edit) -> None:
    """Refuse what an agent re-run cannot do (the agent builds its own context)."""
    bad = [name for name in UNSUPPORTED if getattr(edit, name) not in (None, [])]
    bad += ["tools"] if edit.tools == [] else []  # [] = no tools offered: still a tools edit
    if bad:
        raise ForkError(
            f"the agent re-run cannot apply a {'/'.join(bad)} edit (the agent "
            "builds its own messages and tools); use the model re-run"
        )


def _item(
    role: str,
    content: str,
    source: str,
    calls: Sequence[Any] = (),
    call_id: str = "",
    name: str = "",
) -> dict[str, Any]:
    """One Item dict of an ``edit`` snapshot, members in loom-harness's order (§1.3)."""
    return {
        "role": role,
        "content": content,
        "source": source,
        "pinned": False,
        "tokens": max(1, len(content) // 4),
        "tool_calls": [
            {"id": str(i or ""), "name": str(n or ""), "input": a if isinstance(a, dict) else {}}
            for i, n, a in calls
        ],
        "tool_call_id": call_id,
        "name": name,
    }


def snapshot_items(request: dict[str, Any], dialect: str, note: str | None) -> list[dict[str, Any]]:
    """The context a forwarded request carried, as the ``edit`` effect's Item list; the
    user turn holding ``note`` is marked ``source: "fork-edit"`` (loom-harness's label)."""
    names: dict[str, str] = {}
    items = []
    for turn in conversation(request, dialect)[1]:
        for cid, name, _args in turn["calls"]:
            names[str(cid)] = str(name or "")
        for cid, text in turn["results"]:
            items.append(
                _item("tool", text, "tool", call_id=str(cid or ""), name=names.get(str(cid), ""))
            )
        if turn["role"] == "assistant":
            items.append(_item("assistant", turn["text"], "assistant", turn["calls"]))
        elif turn["text"] or not turn["results"]:
            marked = bool(note) and turn["text"].endswith(note or "")
            items.append(
                _item(turn["role"] or "user", turn["text"], "fork-edit" if marked else "episode")
            )
    return items
