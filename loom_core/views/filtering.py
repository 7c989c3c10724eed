"""Filter a timeline's steps by kind, tool, agent, flags and text.

Query syntax (space-separated terms, all must hold): ``kind:model``,
``tool:read_file`` (glob: the tool's steps and the model steps that called it, as the run
library's search means it; ``kind:tool:read_file`` is the tool's steps only), ``agent:lead``, ``is:error`` / ``is:blocked`` /
``is:denied`` / ``is:shield`` / ``is:subagent``; anything else is text searched
case-insensitively in the step's payload (``"in quotes"`` for text with spaces or
a colon). ``is:error`` is every step where something went wrong: a tool error, a
blocked or denied call, and the model step whose call was blocked or denied.
A key the filter does not know, or a value no step can have, is reported in
:attr:`Query.problems` naming the valid ones: a typo never silently shows
everything. Text search scans raw payload bytes (where non-ASCII is
``\\u``-escaped), so both spellings of the needle are tried. Runs off the GUI
thread; ``cancelled`` is polled so a newer query can supersede it.

Why whole columns: a million-step run must filter in a fraction of a second. The
non-text terms are numpy comparisons over the timeline's arrays; text terms scan
the lowercased text column of :mod:`loom_core.views.step_index` a chunk at a time,
and matches are handed out per chunk (:func:`iter_matches`) so they can be shown
while the rest is searched. Once the run's trigram index is there
(:mod:`loom_core.views.text_index`) only the blocks of steps it leaves are searched.
A chunk whose column is not built is first searched where its steps' bytes lie
(:mod:`loom_core.views.raw_scan`); only a common text builds the column.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from difflib import get_close_matches
from fnmatch import fnmatchcase

import numpy as np
import numpy.typing as npt

from loom_core.formats.mapped_file import release_pages
from loom_core.views.raw_scan import Scanner, scanner
from loom_core.views.step_index import StepIndex, find_steps, holds, step_index
from loom_core.views.timeline import (
    F_BLOCKED,
    F_DENIED,
    F_ERROR,
    F_SHIELD,
    K_TOOL,
    KIND_NAMES,
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


def _did_you_mean(typed: str, valid: tuple[str, ...], prefix: str = "", suffix: str = "") -> str:
    """`` — did you mean model?`` for a near miss (``modle``: a letter swapped, missing or
    extra), else nothing: a guess that is not close is noise."""
    close = get_close_matches(typed, valid, n=1, cutoff=0.75)
    return f" — did you mean {prefix}{close[0]}{suffix}?" if close else ""


def _kind(q: Query, value: str) -> None:
    if value.lower().startswith("tool:"):
        q.kinds.add(K_TOOL)
        q.tools.append(value[5:] or "*")
        return
    low = value.lower()  # a prompt also answers to loom's word for it, "episode"
    codes = {
        i
        for i, names in enumerate(zip(KIND_NAMES, KINDS, strict=True))
        if any(n.startswith(low) for n in names)
    }
    if not codes:
        q.nothing = True
        q.problems.append(
            f"no kind “{value}”{_did_you_mean(low, KIND_NAMES)}; kinds are {_listing(KIND_NAMES)}"
        )
    q.kinds.update(codes)


def _is(q: Query, value: str) -> None:
    value = value.lower()
    if value == "subagent":
        q.subagent = True
    elif value in _FLAGS:
        q.flags |= _FLAGS[value]
    else:
        q.nothing = True
        q.problems.append(
            f"no such flag is:{value}{_did_you_mean(value, IS_VALUES, 'is:')}; "
            f"flags are {_listing(IS_VALUES)}"
        )


def _key_value(q: Query, key: str, value: str) -> None:
    if not value:
        hint = (
            _listing(KIND_NAMES)
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
                f"unknown key “{key}:”{_did_you_mean(key.lower(), KEYS, suffix=':')} (searched as "
                "text); keys are "
                f"{_listing(KEYS, ':')}; put text with a colon in quotes"
            )
        q.texts.append(term.lower())
    return q


def _needles(text: str) -> list[bytes]:
    escaped = json.dumps(text)[1:-1].encode("ascii")
    plain = text.encode("utf-8")
    return [plain] if escaped == plain else [plain, escaped.lower()]


def _structural(tl: Timeline, q: Query, upto: int) -> npt.NDArray[np.bool_] | None:
    """Which of steps ``0 .. upto - 1`` pass the non-text terms (``None``: no such term),
    computed on whole columns at once."""
    if not (q.kinds or q.flags or q.subagent or q.agents or q.tools):
        return None
    mask = np.ones(upto, dtype=bool)
    if q.kinds:
        mask &= np.isin(np.frombuffer(tl.kind[:upto], np.uint8), list(q.kinds))
    if q.flags:
        mask &= _flagged(tl, q.flags, upto)
    if q.subagent:
        mask &= np.frombuffer(tl.depth[:upto], np.uint16) != 0
    if q.agents:
        wanted = [i for i, name in enumerate(tl.agents) if any(a in name.lower() for a in q.agents)]
        mask &= np.isin(np.frombuffer(tl.agent[:upto], np.uint16), wanted)
    if q.tools:
        index = step_index(tl)
        names = index.name_ids(tl, upto)
        wanted = [
            i
            for i, name in enumerate(index.names)
            if name.startswith("tool:") and any(fnmatchcase(name[5:], t) for t in q.tools)
        ]
        tools = np.isin(names, wanted)
        mask &= tools | _callers(tl, tools, q.tools, upto)
    return mask


def _callers(
    tl: Timeline, tools: npt.NDArray[np.bool_], patterns: list[str], upto: int
) -> npt.NDArray[np.bool_]:
    """The model steps that called one of the tools ``tools`` marks: each result's caller,
    and a step holding a shield decision on such a tool (a denied call has no result)."""
    out = np.zeros(upto, dtype=bool)
    callers = np.frombuffer(tl.call_of, np.dtype(f"i{tl.call_of.itemsize}"))[:upto][tools]
    out[callers[(callers >= 0) & (callers < upto)]] = True
    events = tl.doc.shield_events if tl.shield_at else []
    for step, placed in tl.shield_at.items():
        if step < upto and any(
            fnmatchcase(str(events[i].tool or ""), p) for i in placed for p in patterns
        ):
            out[step] = True
    return out


def _flagged(tl: Timeline, flags: int, upto: int) -> npt.NDArray[np.bool_]:
    """Steps with any of ``flags``, and the model steps whose calls were blocked or denied
    (a model step carries those flags of the calls it made)."""
    own = np.frombuffer(tl.flags[:upto], np.uint8)
    mask: npt.NDArray[np.bool_] = (own & flags) != 0
    if flags & _CALL_FLAGS:
        for result in np.flatnonzero(own & (flags & _CALL_FLAGS)).tolist():
            caller = tl.call_of[result]
            if 0 <= caller < upto:
                mask[caller] = True
    return mask


def _text_matches(
    tl: Timeline,
    mask: npt.NDArray[np.bool_] | None,
    groups: list[list[bytes]],
    upto: int,
    cancelled: Callable[[], bool],
) -> Iterator[array[int]]:
    """Matching steps chunk by chunk: every text term (any spelling) in the step's text.
    The longest term is searched for; the others are checked only in the steps holding
    it (a longer needle is found faster and is likely rarer). With the run's trigram
    index only the steps it leaves are searched, and a chunk with none is not built;
    the steps its frequent words' bits already show holding every term are not searched."""
    groups = sorted(groups, key=lambda g: -min(map(len, g)))
    index, scan = step_index(tl), scanner(groups)
    found, sure = index.text_index, None
    if found is not None and found.steps == upto:  # only the steps it can hold a text in
        certain, possible = found.narrow(groups)
        if certain is not None:
            sure = certain if mask is None else mask & certain
            possible = ~certain if possible is None else possible & ~certain
        if possible is not None:
            mask = possible if mask is None else mask & possible
    for first, stop in index.bounds(tl, upto):
        if cancelled():
            return
        local = None if mask is None else mask[first:stop]
        steps = _searched(tl, index, local, groups, (first, stop), scan)
        if sure is not None and sure[first:stop].any():  # (disjoint from the steps searched)
            known = np.flatnonzero(sure[first:stop]).astype(np.int32) + first
            yield array("i", np.sort(np.concatenate((known, np.array(steps, np.int32)))).tobytes())
        elif steps:
            yield array("i", steps)


def _searched(
    tl: Timeline,
    index: StepIndex,
    local: npt.NDArray[np.bool_] | None,
    groups: list[list[bytes]],
    span: tuple[int, int],
    scan: Scanner | None,
) -> list[int]:
    """The steps ``first .. stop - 1`` (``span``; those ``local`` marks, when given) whose
    text holds every group: a few steps of a chunk not built are checked alone, the others
    of a chunk not built are scanned where their bytes lie (``scan``, when there is one)."""
    first, stop = span
    if not index.built(first, stop):
        if local is not None and np.count_nonzero(local) * 8 < len(local):
            # none or a few: those steps alone, no chunk built
            return _each_step(tl, index, (np.flatnonzero(local) + first).tolist(), groups)
        if scan is not None and not scan.common:
            found = scan.steps(*index.kept_parts(tl, first, stop), first, local)
            release_pages(tl.doc.source)  # (a mapped run's pages the scan read)
            if found is not None:  # (None: a common text, which the column answers)
                return found
    chunk = index.chunk(tl, first, stop)
    steps = find_steps(chunk, groups[0], local)
    for group in groups[1:]:
        steps = [s for s in steps if holds(chunk, s, group)]
    return steps


def _each_step(
    tl: Timeline, index: StepIndex, steps: list[int], groups: list[list[bytes]]
) -> list[int]:
    """Which of ``steps`` hold every group (in one of its spellings): their texts joined
    into one chunk, searched as a built chunk is."""
    chunk = index.steps_chunk(tl, steps)
    found = find_steps(chunk, groups[0])
    for group in groups[1:]:
        found = [i for i in found if holds(chunk, i, group)]
    return [steps[i] for i in found]


def iter_matches(
    tl: Timeline,
    text: str,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[array[int]]:
    """The steps matching ``text``, in ascending batches as they are found (nothing for
    an empty query: callers ask :func:`parse_query` whether it is empty)."""
    q = parse_query(text)
    if q.empty or q.nothing:
        return
    upto = len(tl)  # a live timeline may grow meanwhile: this snapshot is filtered
    mask = _structural(tl, q, upto)
    if not q.texts:
        if mask is not None and not cancelled():
            yield array("i", np.flatnonzero(mask).astype(np.int32).tobytes())
        return
    yield from _text_matches(tl, mask, [_needles(t) for t in q.texts], upto, cancelled)


def filter_steps(
    tl: Timeline,
    text: str,
    cancelled: Callable[[], bool] = lambda: False,
    found: Callable[[array[int]], None] | None = None,
) -> array[int] | None:
    """Steps matching ``text`` in order, or ``None`` when the query is empty (show all).

    ``found`` is handed each batch of matches as soon as it is known, so a list can
    show the first ones while the rest of a long run is searched.
    """
    if parse_query(text).empty:
        return None
    out = array("i")
    for batch in iter_matches(tl, text, cancelled):
        out.extend(batch)
        if found is not None:
            found(batch)
    return out


def prepare_filter(tl: Timeline) -> None:
    """Build the columns every ``tool:`` query needs, before the first one is typed in full."""
    step_index(tl).name_ids(tl, len(tl))


def filter_message(text: str, rows: array[int] | None, total: int) -> tuple[str, bool]:
    """What to say under the filter box, and whether it is a problem (shown in red):
    the query's problems, "no step matches …" for an empty result, else the count."""
    problems = parse_query(text).problems
    if problems:
        return " · ".join(problems), True
    if rows is not None and not len(rows):
        return f"no step matches “{text.strip()}”", True
    return ("" if rows is None else f"{len(rows):,} of {total:,} rows shown"), False
