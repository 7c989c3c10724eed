"""A live Claude Code session folded where the last read stopped, not from its first line.

Why: a live tab read the appended lines only, but then built the run again from every
line so far (the fold into steps, the loom trace and its checksum): O(the session) for
each appended line, about 0.55 s of CPU on a 45 MB session. Here the fold's state is
kept at a checkpoint (:class:`_Base`), and each read folds only the lines after it, on a
copy (:meth:`Builder.copy <loom_core.formats.claude_build.Builder.copy>`), then finishes
the copy as a whole read finishes. The checkpoint moves to the first line of the last
response read (Claude Code writes a response's tool calls one line each, each call's
result between them, so that response may still go on; those before it are complete),
so what is folded again per read is the last response's lines and its tools' results.

What a whole read decides from every line is checked, and where a later line changes
what the checkpoint holds the fold starts again from the first line (the result is then
the whole read's, at its cost):

* rewound branches (:func:`~.claude_branches.abandoned`, over every entry) must leave
  the checkpoint's entries as they were;
* a response continued after the checkpoint (:class:`~.claude_build.Unresumable`);
* the files beside the session (sub-agents, compaction calls) unchanged, and the
  compaction calls matched to the same boundaries; no compaction summary written for a
  boundary before the checkpoint.

Rewound branches (:mod:`.claude_rewinds`) and what the session says about itself
(:class:`~.claude_session.SessionFacts`) are kept up to date the same way.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from loom_core.formats.claude_build import Builder, Unresumable, response_key
from loom_core.formats.claude_compact import Compaction, is_boundary, match
from loom_core.formats.claude_records import Lines, parse_lines, s
from loom_core.formats.claude_rewinds import Rewinds
from loom_core.formats.claude_session import (
    NAME,
    SessionFacts,
    claude_records,
    compaction_files,
    outcome,
    read_compactions,
    read_subagents,
    subagent_files,
)
from loom_core.formats.document import Document
from loom_core.formats.growing_run import GrowingRun

__all__ = ["ResumedLines"]


def _beside(path: str) -> tuple[tuple[str, int, int], ...]:
    """The files beside the session (size and time): a change means a fold from the start."""
    out = []
    for file in [*subagent_files(path).values(), *compaction_files(path)]:
        try:
            st = os.stat(file)
            out.append((str(file), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((str(file), -1, -1))
    return tuple(out)


@dataclass
class _Base:
    """The fold's state after the session's first ``upto`` entries (not finished)."""

    build: Builder
    beside: tuple[tuple[str, int, int], ...]
    calls: list[Compaction]
    read: list[str]  # what reading the files beside said
    anchors: set[str]  # the session entries the compaction calls hang from
    matched: int  # entries when the calls were last matched to boundaries
    upto: int = 0
    gone: frozenset[int] = frozenset()  # rewound entries among the first ``upto``
    boundaries: set[str] = field(default_factory=set)  # compaction boundaries folded


class ResumedLines:
    """The Claude Code reader's :class:`~loom_core.formats.reader.LineParser`; see the
    module docstring."""

    def __init__(self) -> None:
        self._lines = Lines()
        self._recs: list[dict[str, Any]] = []
        self._claude = False  # one entry is Claude Code's
        self._count = 0  # lines taken: the next block's first line is number count + 1
        self._base: _Base | None = None
        self._run = GrowingRun()
        self._rewinds = Rewinds()
        self._facts = SessionFacts()
        self.restarts = 0  # folds from the first line (the first read included)

    def add(self, block: bytes) -> None:
        part = parse_lines(block, self._count + 1)
        self._count += block.count(b"\n")
        self._lines.records += part.records
        self._lines.bad += part.bad
        self._recs += [rec for _n, rec in part.records]

    def document(self, path: str, tail: bytes) -> Document:
        torn = parse_lines(tail, self._count + 1).torn  # the whole read's rule, on the tail
        lines = Lines(self._lines.records, self._lines.bad, torn)
        recs = self._recs
        if not self._claude:  # LoadError as a whole read's; once one entry is, it stays
            self._claude = bool(claude_records(lines, path))
        gone = self._rewinds.update(recs)
        try:
            build, base = self._fold(recs, gone, path)
        except Unresumable:
            self._base = None
            build, base = self._fold(recs, gone, path)
        warnings, extra = outcome(lines, recs, gone, build, base.read, path, self._facts)
        build.run.extra.update(extra)
        doc = self._run.document(build.run, path, NAME, warnings, len(base.build.run.log))
        self._advance(recs, gone)
        return dataclasses.replace(doc, torn=True) if torn else doc

    def _fold(self, recs: list[dict[str, Any]], gone: set[int], path: str) -> tuple[Builder, _Base]:
        """The finished fold of every entry: the checkpoint's copy, the entries after it."""
        base = self._base
        if base is not None and not self._holds(base, recs, gone, path):
            base = None
        if base is None:
            self.restarts += 1
            read: list[str] = []
            subagents = read_subagents(path, read)
            calls = read_compactions(path, read)
            kept = [r for i, r in enumerate(recs) if i not in gone]
            build = Builder(subagents=subagents, compactions=match(kept, calls))
            anchors = {s(r.get("parentUuid")) for call in calls for r in call.records}
            base = self._base = _Base(build, _beside(path), calls, read, anchors, len(recs))
        build = base.build.copy()
        build.add_file([r for i, r in enumerate(recs[base.upto :], base.upto) if i not in gone])
        build.finish()
        stamps = (r.get("timestamp") for i, r in enumerate(recs) if i not in gone)
        build.run.extra["started"] = next((t for t in stamps if isinstance(t, str)), None)
        return build, base  # (the first time of the entries kept, as a whole read takes it)

    def _holds(self, base: _Base, recs: list[dict[str, Any]], gone: set[int], path: str) -> bool:
        """Whether the checkpoint is what a fold of the same entries from the start gives."""
        if frozenset(i for i in gone if i < base.upto) != base.gone:
            return False
        if _beside(path) != base.beside:
            return False
        if (
            base.calls
            and any(  # a boundary or an entry a compaction call hangs from
                is_boundary(r) or s(r.get("uuid")) in base.anchors for r in recs[base.matched :]
            )
        ):
            kept = [r for i, r in enumerate(recs) if i not in gone]
            if match(kept, base.calls) != base.build.compactions:
                return False
        base.matched = len(recs)
        later = recs[base.upto :]
        return not any(
            r.get("isCompactSummary") is True and s(r.get("parentUuid")) in base.boundaries
            for r in later
        )

    def _advance(self, recs: list[dict[str, Any]], gone: set[int]) -> None:
        """Move the checkpoint to the first line of the last response read: the lines
        before it are final (a response's lines come between its tools' results, so the
        last one may go on)."""
        base = self._base
        if base is None:
            return
        upto = _last_response(recs, base.upto)
        if upto <= base.upto:
            return
        part = [r for i, r in enumerate(recs[base.upto : upto], base.upto) if i not in gone]
        build = base.build.copy()
        try:
            build.add_file(part)
        except Unresumable:
            self._base = None
            return
        base.build, base.upto = build, upto
        base.gone = frozenset(i for i in gone if i < upto)
        base.boundaries.update(s(r.get("uuid")) for r in part if is_boundary(r))


def _last_response(recs: list[dict[str, Any]], start: int) -> int:
    """The index of the first line of the last response at or after ``start`` (else
    ``start``)."""
    last = next((i for i in range(len(recs) - 1, start - 1, -1) if _answer(recs[i])), None)
    if last is None:
        return start
    key = response_key(recs[last])
    return next(
        i for i in range(start, last + 1) if _answer(recs[i]) and response_key(recs[i]) == key
    )


def _answer(rec: dict[str, Any]) -> bool:
    return rec.get("type") == "assistant"
