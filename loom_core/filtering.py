"""Filter a timeline's steps by kind, tool, agent, flags and text.

Query syntax (space-separated terms, all must hold): ``kind:model``,
``tool:read_file`` (glob), ``agent:lead``, ``is:error`` / ``is:blocked`` /
``is:shield`` / ``is:subagent``; anything else is text searched case-insensitively
in the step's payload. Text search scans raw payload bytes (where non-ASCII is
``\\u``-escaped), so both spellings of the needle are tried. Runs off the GUI
thread; ``cancelled`` is polled so a newer query can supersede it.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Callable

from .timeline import F_BLOCKED, F_DENIED, F_ERROR, F_SHIELD, K_EPISODE, KINDS, Timeline

_FLAGS = {"error": F_ERROR, "blocked": F_BLOCKED | F_DENIED, "shield": F_SHIELD,
          "denied": F_DENIED}


@dataclass
class Query:
    """A parsed filter query."""

    kinds: set[int] = field(default_factory=set)
    tools: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    flags: int = 0
    subagent: bool = False
    texts: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.kinds or self.tools or self.agents or self.flags or self.subagent
                    or self.texts)


def parse_query(text: str) -> Query:
    """Parse the filter box's text."""
    q = Query()
    for term in text.split():
        key, _, value = term.partition(":")
        if key == "kind" and value:
            q.kinds.update(i for i, k in enumerate(KINDS) if k.startswith(value.lower()))
            if value.startswith("tool:"):
                q.tools.append(value[5:])
        elif key == "tool" and value:
            q.tools.append(value if any(c in value for c in "*?[") else f"*{value}*")
        elif key == "agent" and value:
            q.agents.append(value.lower())
        elif key == "is" and value == "subagent":
            q.subagent = True
        elif key == "is" and value in _FLAGS:
            q.flags |= _FLAGS[value]
        else:
            q.texts.append(term.lower())
    return q


def _needles(text: str) -> list[bytes]:
    escaped = json.dumps(text)[1:-1].encode("ascii")
    plain = text.encode("utf-8")
    return [plain] if escaped == plain else [plain, escaped.lower()]


def _payload(tl: Timeline, step: int) -> bytes:
    e = tl.effect_of[step]
    if e < 0:
        return tl.doc.episodes[tl.episode_of[step]].lower().encode("utf-8")
    raw = tl.doc.effects[e].result
    return bytes(raw).lower() if raw is not None else b""


def _matches(tl: Timeline, step: int, q: Query, needles: list[list[bytes]]) -> bool:
    if q.kinds and tl.kind[step] not in q.kinds:
        return False
    if q.flags and not tl.flags[step] & q.flags:
        return False
    if q.subagent and not tl.depth[step]:
        return False
    if q.agents and not any(a in tl.agents[tl.agent[step]].lower() for a in q.agents):
        return False
    if q.tools:
        name = tl.kind_name(step)
        if not name.startswith("tool:") or not any(fnmatchcase(name[5:], t) for t in q.tools):
            return False
    if needles:
        payload = _payload(tl, step)
        if tl.kind[step] != K_EPISODE:
            payload += tl.kind_name(step).lower().encode()
        return all(any(n in payload for n in group) for group in needles)
    return True


def filter_steps(tl: Timeline, text: str, cancelled: Callable[[], bool] = lambda: False,
                 ) -> array | None:
    """Steps matching ``text`` in order, or ``None`` when the query is empty (show all)."""
    q = parse_query(text)
    if q.empty:
        return None
    needles = [_needles(t) for t in q.texts]
    out = array("i")
    for step in range(len(tl)):
        if step % 2048 == 0 and cancelled():
            break
        if _matches(tl, step, q, needles):
            out.append(step)
    return out
