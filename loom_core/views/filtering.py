"""Filter a timeline's steps by kind, tool, agent, flags and text.

Query syntax (space-separated terms, all must hold): ``kind:model``,
``tool:read_file`` (glob), ``agent:lead``, ``is:error`` / ``is:blocked`` /
``is:denied`` / ``is:shield`` / ``is:subagent``; anything else is text searched
case-insensitively in the step's payload (``"in quotes"`` for text with spaces or
a colon). ``is:error`` is every step where something went wrong: a tool error, a
blocked or denied call, and the model step whose call was blocked or denied.
A key the filter does not know, or a value no step can have, is reported in
:attr:`Query.problems` naming the valid ones: a typo never silently shows
everything. Text search scans raw payload bytes (where non-ASCII is
``\\u``-escaped), so both spellings of the needle are tried. Runs off the GUI
thread; ``cancelled`` is polled so a newer query can supersede it.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from loom_core.views.timeline import (
    F_BLOCKED,
    F_DENIED,
    F_ERROR,
    F_SHIELD,
    K_EPISODE,
    K_TOOL,
    KINDS,
    Timeline,
)

_FLAGS = {
    "error": F_ERROR | F_BLOCKED | F_DENIED,
    "blocked": F_BLOCKED | F_DENIED,
    "denied": F_DENIED,
    "shield": F_SHIELD,
}
_CALL_FLAGS = F_BLOCKED | F_DENIED  # a model step carries these of the calls it made
KEYS = ("kind", "tool", "agent", "is")
IS_VALUES = (*_FLAGS, "subagent")
_TERM = re.compile(r'"([^"]*)"|(\S+)')
_KEY = re.compile(r"[A-Za-z]+")


@dataclass
class Query:
    """A parsed filter query."""

    kinds: set[int] = field(default_factory=set)
    tools: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    flags: int = 0
    subagent: bool = False
    texts: list[str] = field(default_factory=list)
    nothing: bool = False  # a term no step can satisfy (``kind:modle``)
    problems: list[str] = field(default_factory=list)  # what the user should be told

    @property
    def empty(self) -> bool:
        return not (
            self.kinds
            or self.tools
            or self.agents
            or self.flags
            or self.subagent
            or self.texts
            or self.nothing
        )


def _listing(values: tuple[str, ...] | list[str], suffix: str = "") -> str:
    return ", ".join(v + suffix for v in values)


def _kind(q: Query, value: str) -> None:
    if value.lower().startswith("tool:"):
        q.kinds.add(K_TOOL)
        q.tools.append(value[5:] or "*")
        return
    codes = {i for i, k in enumerate(KINDS) if k.startswith(value.lower())}
    if not codes:
        q.nothing = True
        q.problems.append(f"no kind “{value}”; kinds are {_listing(KINDS)}")
    q.kinds.update(codes)


def _is(q: Query, value: str) -> None:
    value = value.lower()
    if value == "subagent":
        q.subagent = True
    elif value in _FLAGS:
        q.flags |= _FLAGS[value]
    else:
        q.nothing = True
        q.problems.append(f"no such flag is:{value}; flags are {_listing(IS_VALUES)}")


def _key_value(q: Query, key: str, value: str) -> None:
    if not value:
        hint = (
            _listing(KINDS)
            if key == "kind"
            else _listing(IS_VALUES)
            if key == "is"
            else "a name (* and ? are wildcards)"
        )
        q.problems.append(f"{key}: needs a value: {hint}")
    elif key == "kind":
        _kind(q, value)
    elif key == "tool":
        q.tools.append(value if any(c in value for c in "*?[") else f"*{value}*")
    elif key == "agent":
        q.agents.append(value.lower())
    else:
        _is(q, value)


def parse_query(text: str) -> Query:
    """Parse the filter box's text."""
    q = Query()
    for quoted, term in _TERM.findall(text):
        if not term:
            if quoted.strip():
                q.texts.append(quoted.lower())
            continue
        key, colon, value = term.partition(":")
        if colon and key.lower() in KEYS:
            _key_value(q, key.lower(), value)
            continue
        if colon and value and _KEY.fullmatch(key):
            q.problems.append(
                f"unknown key “{key}:” (searched as text); keys are "
                f"{_listing(KEYS, ':')}; put text with a colon in quotes"
            )
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


def _flags(tl: Timeline, step: int) -> int:
    """The step's flags, plus the blocked/denied flags of the calls a model step made."""
    flags = tl.flags[step]
    for result in tl.calls_of.get(step, ()):
        flags |= tl.flags[result] & _CALL_FLAGS
    return flags


def _matches(tl: Timeline, step: int, q: Query, needles: list[list[bytes]]) -> bool:
    if q.kinds and tl.kind[step] not in q.kinds:
        return False
    if q.flags and not _flags(tl, step) & q.flags:
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


def filter_steps(
    tl: Timeline,
    text: str,
    cancelled: Callable[[], bool] = lambda: False,
) -> array[int] | None:
    """Steps matching ``text`` in order, or ``None`` when the query is empty (show all)."""
    q = parse_query(text)
    if q.empty:
        return None
    if q.nothing:
        return array("i")
    needles = [_needles(t) for t in q.texts]
    out = array("i")
    for step in range(len(tl)):
        if step % 2048 == 0 and cancelled():
            break
        if _matches(tl, step, q, needles):
            out.append(step)
    return out


def filter_message(text: str, rows: array[int] | None, total: int) -> tuple[str, bool]:
    """What to say under the filter box, and whether it is a problem (shown in red):
    the query's problems, "no step matches …" for an empty result, else the count."""
    problems = parse_query(text).problems
    if problems:
        return " · ".join(problems), True
    if rows is not None and not len(rows):
        return f"no step matches “{text.strip()}”", True
    return ("" if rows is None else f"{len(rows):,} of {total:,} rows shown"), False
