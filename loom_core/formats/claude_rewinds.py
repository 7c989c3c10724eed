"""Rewound branches of a live session, kept up to date as entries are appended.

Why: :func:`~.claude_branches.abandoned` walks every entry (the tree, the path from the
last entry to the root, each parent's prompts): 0.35 s of CPU for each appended line of
a 45 MB session. What it decides is explained in :mod:`.claude_branches`: only parents
with two or more prompts ("forks") drop anything, by which of their prompts lies on the
path from the last conversation entry to the root. An appended entry changes that in
few ways, each cheap to see; then (and on the first read) the whole walk is done again,
and otherwise the answer only grows by the new entries hanging from a dropped one:

* an entry whose parent already has another prompt (a new fork, or a fork's new prompt);
* an entry whose ``uuid`` was seen before (entries then hang from the first);
* the path changed where a fork or one of its prompts lies: the new path's part below
  where it meets the old one, and the old path's part below that, hold neither (or the
  new path does not meet the old one at all).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loom_core.formats.claude_branches import _is_prompt, _path_to_root, abandoned
from loom_core.formats.claude_records import CONVERSATION, s

__all__ = ["Rewinds"]


class Rewinds:
    """:func:`~.claude_branches.abandoned` of a growing list of entries; see the module
    docstring."""

    def __init__(self) -> None:
        self.taken = 0
        self.gone: set[int] = set()
        self.asked = 0  # whole walks (the first read's included)
        self._by_uuid: dict[str, int] = {}
        self._children: dict[str, list[int]] = {}
        self._prompts: dict[str, int] = {}  # parent uuid -> its prompts
        self._leaf = -1
        self._path: set[str] = set()  # uuids from the last conversation entry to the root
        self._forks: set[str] = set()  # parents with two or more prompts, and those prompts

    def update(self, recs: list[dict[str, Any]]) -> set[int]:
        """The entries on rewound branches, ``recs`` being those taken before and more."""
        start, old_leaf = self.taken, self._leaf
        doubt = self._take(recs, start) or old_leaf < 0 or not self._grows(recs, start, old_leaf)
        if doubt:
            self.asked += 1
            self.gone = abandoned(recs)
            self._path = (
                _path_to_root(recs, self._by_uuid, self._leaf) if self._leaf >= 0 else set()
            )
            return self.gone
        for i in range(start, len(recs)):
            parent = self._by_uuid.get(s(recs[i].get("parentUuid")))
            if parent is not None and parent in self.gone:
                self._drop(recs, i)
        return self.gone

    def _take(self, recs: list[dict[str, Any]], start: int) -> bool:
        """Index the new entries; whether one of them may change an earlier choice."""
        doubt = False
        for i in range(start, len(recs)):
            rec = recs[i]
            uid, parent = s(rec.get("uuid")), s(rec.get("parentUuid"))
            if uid:
                doubt = doubt or uid in self._by_uuid
                self._by_uuid.setdefault(uid, i)
            if parent:
                self._children.setdefault(parent, []).append(i)
                if _is_prompt(rec):
                    self._prompts[parent] = self._prompts.get(parent, 0) + 1
                    doubt = doubt or self._prompts[parent] > 1
                    if self._prompts[parent] > 1:
                        self._fork(recs, parent)
            if uid and rec.get("type") in CONVERSATION and rec.get("isSidechain") is not True:
                self._leaf = i
        self.taken = len(recs)
        return doubt

    def _fork(self, recs: list[dict[str, Any]], parent: str) -> None:
        kids = self._children.get(parent, ())
        self._forks.add(parent)
        self._forks.update(s(recs[k].get("uuid")) for k in kids if _is_prompt(recs[k]))

    def _grows(self, recs: list[dict[str, Any]], start: int, old_leaf: int) -> bool:
        """Whether the path moved to the new last entry away from every fork (and the
        path is updated)."""
        if self._leaf == old_leaf:
            return True
        new = self._walk(recs, self._leaf, lambda uid: uid in self._path)
        if new is None or new[1] is None:
            return False
        old = self._walk(recs, old_leaf, lambda uid: uid == new[1])
        if old is None or old[1] is None:
            return False
        if self._forks & (new[0] | old[0]):
            return False
        self._path -= old[0]
        self._path |= new[0]
        return True

    def _walk(
        self, recs: list[dict[str, Any]], at: int, stop: Callable[[str], bool]
    ) -> tuple[set[str], str | None] | None:
        """The uuids from entry ``at`` up to the first one ``stop`` holds for (not
        included), and that one (None: the root was reached); None where the way up
        is not one ``abandoned`` would take (an entry without a uuid, a loop)."""
        seen: set[str] = set()
        node: int | None = at
        while node is not None:
            rec = recs[node]
            uid = s(rec.get("uuid"))
            if not uid or uid in seen:
                return None
            if stop(uid):
                return seen, uid
            seen.add(uid)
            parent = s(rec.get("parentUuid")) or s(rec.get("logicalParentUuid"))
            node = self._by_uuid.get(parent)
        return seen, None

    def _drop(self, recs: list[dict[str, Any]], top: int) -> None:
        todo = [top]
        while todo:
            i = todo.pop()
            if i not in self.gone:
                self.gone.add(i)
                todo.extend(self._children.get(s(recs[i].get("uuid")), ()))
