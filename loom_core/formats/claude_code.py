"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

The reader: :data:`READER` claims a file whose first lines are Claude Code entries
(:func:`~.claude_records.is_claude_record`: a known entry type with ``sessionId`` and
``uuid``, or a ``summary`` with ``leafUuid``; a loom journal's ``header``/``intent``/
``effect`` lines and the proxy sidecar's ``session`` line never qualify), and
:func:`load_claude_code` makes the run (:mod:`.claude_build`), reading the session's
sub-agent files beside it when they exist. Where each fact comes from:
:mod:`.claude_records`.

What ``Document.extra`` holds: ``records`` (effect seq → the source entries it came from,
with the compaction markers and other entries written just before it; the last step also
gets those written after it), ``unknown`` (entries of types we do not know, and lines that
are not JSON, kept raw), ``other`` (entries that are not steps written after the last
step), ``abandoned`` (entries of a rewound branch, see :mod:`.claude_branches`),
``summaries``,
``session`` (id, project folder, git branch, Claude Code version, title, first prompt).
No ``inputs``: Claude Code does not record the request it sent, so the context view
rebuilds it from the effects.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from loom_core.formats.claude_branches import abandoned
from loom_core.formats.claude_build import Builder
from loom_core.formats.claude_compact import match
from loom_core.formats.claude_records import Lines, is_claude_record, parse_lines
from loom_core.formats.claude_session import (
    NAME,
    claude_records,
    compaction_files,
    outcome,
    read_compactions,
    read_subagents,
    subagent_files,
)
from loom_core.formats.document import Document
from loom_core.formats.foreign import ForeignReader
from loom_core.formats.reader import LineParser

_SNIFF_LINES = 20
_PARTIAL = re.compile(rb'\s*\{.{0,2000}?"type"\s*:\s*"(user|assistant|system)"', re.DOTALL)


def sniff(head: bytes, path: str) -> bool:
    """Claude Code's if one of the first complete lines is one of its entries and none is
    a loom journal or sidecar line (or, when the first line is longer than the head, its
    beginning names a conversation entry type and a session id: Claude Code writes
    ``sessionId`` and ``type`` before the ``message``, which can be megabytes)."""
    end = head.rfind(b"\n") + 1
    if end == 0:
        return _PARTIAL.match(head) is not None and b'"sessionId"' in head
    lines = parse_lines(head[:end]).records[:_SNIFF_LINES]
    loom = ("header", "intent", "effect", "session", "exchange", "end")
    if any(rec.get("type") in loom for _n, rec in lines):
        return False
    return any(is_claude_record(rec) for _n, rec in lines)


def session_of(path: str) -> str | None:
    """The session transcript a sub-agent's file belongs to (``<session>/subagents/
    agent-*.jsonl`` -> ``<session>.jsonl``, compaction files included), else None."""
    file = Path(path)
    if file.parent.name != "subagents" or not file.name.startswith("agent-"):
        return None
    if not file.name.endswith(".jsonl"):
        return None
    return str(file.parent.parent) + ".jsonl"


def load_claude_code(data: bytes, path: str) -> Document:
    """Read a transcript into a run; ``LoadError`` when it holds no Claude Code entry."""
    return load_lines(parse_lines(data), path)


def _resumed_lines() -> LineParser:
    """A live tab's parser: appended lines decoded once, the fold resumed (imported on
    first use: a whole read does not need it)."""
    from loom_core.formats.claude_resume import ResumedLines

    return ResumedLines()


def load_lines(lines: Lines, path: str) -> Document:
    """The run from a transcript's decoded lines (``LoadError`` when no line is a Claude
    Code entry): everything a read does after decoding, whole or appended to."""
    recs = claude_records(lines, path)
    gone = abandoned(recs)
    kept = [rec for i, rec in enumerate(recs) if i not in gone]
    read: list[str] = []  # what the files beside the session said when read
    build = Builder(
        subagents=read_subagents(path, read),
        compactions=match(kept, read_compactions(path, read)),
    )
    build.add_file(kept)
    build.finish()
    warnings, extra = outcome(lines, recs, gone, build, read, path)
    build.run.extra.update(extra)
    doc = build.run.document(path, NAME, warnings)
    return dataclasses.replace(doc, torn=True) if lines.torn else doc


READER = ForeignReader(
    name=NAME,
    label="Claude Code transcript",
    patterns=(),  # no pattern of its own: *.jsonl is already in the Open filter
    sniff=sniff,
    load=load_claude_code,
    companions=lambda path: [
        *(str(p) for p in subagent_files(path).values()),
        *map(str, compaction_files(path)),
    ],
    part_of=lambda path: session_of(path),
    lines=_resumed_lines,
)
