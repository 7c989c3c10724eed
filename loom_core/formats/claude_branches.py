"""Rewound branches of a Claude Code session: what the conversation left behind.

Entries form a tree through ``parentUuid`` ([types] in :mod:`.claude_records`). When a user
rewinds and sends a different prompt, the new prompt hangs off the same parent as the old
one, and the old prompt's subtree stays in the file. Showing it in file order would put
answers the model never saw again into every later context, so those subtrees are left
out of the steps (kept raw) -- but only where the evidence is unambiguous: a parent with two
or more human prompts as children, the last conversation entry descending from exactly one
of them. Any other branching (entries that may hang off one another for other reasons, such
as tool results) is left alone and read in file order.
"""

from __future__ import annotations

from typing import Any

from loom_core.formats.claude_records import CONVERSATION, prompt_text, s


def _is_prompt(rec: dict[str, Any]) -> bool:
    return (
        rec.get("type") == "user" and rec.get("isSidechain") is not True and bool(prompt_text(rec))
    )


def _path_to_root(recs: list[dict[str, Any]], by_uuid: dict[str, int], leaf: int) -> set[str]:
    """uuids from the leaf up (across a compaction boundary through ``logicalParentUuid``)."""
    path: set[str] = set()
    at: int | None = leaf
    while at is not None:
        uid = s(recs[at].get("uuid"))
        if not uid or uid in path:
            break
        path.add(uid)
        parent = s(recs[at].get("parentUuid")) or s(recs[at].get("logicalParentUuid"))
        at = by_uuid.get(parent)
    return path


def abandoned(recs: list[dict[str, Any]]) -> set[int]:
    """Indexes of the entries on rewound branches (see the module docstring)."""
    by_uuid: dict[str, int] = {}
    children: dict[str, list[int]] = {}
    leaf = -1
    for i, rec in enumerate(recs):
        uid, parent = s(rec.get("uuid")), s(rec.get("parentUuid"))
        if uid:
            by_uuid.setdefault(uid, i)
        if parent:
            children.setdefault(parent, []).append(i)
        if uid and rec.get("type") in CONVERSATION and rec.get("isSidechain") is not True:
            leaf = i
    if leaf < 0:
        return set()
    path = _path_to_root(recs, by_uuid, leaf)
    dropped: set[int] = set()
    for parent, kids in children.items():
        prompts = [k for k in kids if _is_prompt(recs[k])]
        kept = [k for k in prompts if s(recs[k].get("uuid")) in path]
        if parent not in path or len(prompts) < 2 or len(kept) != 1:
            continue
        for k in prompts:
            if k != kept[0]:
                _subtree(recs, children, k, dropped)
    return dropped


def _subtree(
    recs: list[dict[str, Any]], children: dict[str, list[int]], top: int, out: set[int]
) -> None:
    todo = [top]
    while todo:
        i = todo.pop()
        if i in out:
            continue
        out.add(i)
        todo.extend(children.get(s(recs[i].get("uuid")), ()))
