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
import os
import re
from pathlib import Path
from typing import Any

from loom_core.errors import LoadError
from loom_core.formats.claude_branches import abandoned
from loom_core.formats.claude_build import Builder
from loom_core.formats.claude_compact import Compaction, match
from loom_core.formats.claude_records import Lines, d, is_claude_record, parse_lines, s
from loom_core.formats.document import Document
from loom_core.formats.foreign import ForeignReader
from loom_core.formats.reader import LineParser

NAME = "claude-code"
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


def subagent_files(path: str) -> dict[str, Path]:
    """agentId → its file, from ``<session>/subagents/agent-<agentId>.jsonl`` beside the
    transcript ([subagents]; ``agent-acompact-*`` is internal compaction, not a sub-agent)."""
    folder = Path(path).with_suffix("") / "subagents"
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    found = {}
    for name in names:
        if name.startswith("agent-") and name.endswith(".jsonl") and "acompact" not in name:
            found[name[len("agent-") : -len(".jsonl")]] = folder / name
    return found


def session_of(path: str) -> str | None:
    """The session transcript a sub-agent's file belongs to (``<session>/subagents/
    agent-*.jsonl`` -> ``<session>.jsonl``, compaction files included), else None."""
    file = Path(path)
    if file.parent.name != "subagents" or not file.name.startswith("agent-"):
        return None
    if not file.name.endswith(".jsonl"):
        return None
    return str(file.parent.parent) + ".jsonl"


def compaction_files(path: str) -> list[Path]:
    """The compaction calls Claude Code wrote beside the transcript
    (``<session>/subagents/agent-acompact-*.jsonl``, :mod:`.claude_compact`)."""
    folder = Path(path).with_suffix("") / "subagents"
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [folder / n for n in names if n.startswith("agent-acompact") and n.endswith(".jsonl")]


def _read_compactions(path: str, warnings: list[str]) -> list[Compaction]:
    calls = []
    for file in compaction_files(path):
        try:
            lines = parse_lines(file.read_bytes())
        except OSError as err:
            warnings.append(f"compaction file {file.name} cannot be read ({err.strerror or err})")
            continue
        calls.append(Compaction.of([rec for _n, rec in lines.records]))
    return calls


def _read_subagents(path: str, warnings: list[str]) -> dict[str, list[dict[str, Any]]]:
    agents = {}
    for agent_id, file in subagent_files(path).items():
        try:
            lines = parse_lines(file.read_bytes())
        except OSError as err:
            warnings.append(f"sub-agent file {file.name} cannot be read ({err.strerror or err})")
            continue
        recs = [rec for _n, rec in lines.records]
        first = next((s(r.get("agentId")) for r in recs if s(r.get("agentId"))), "")
        agents[first or agent_id] = recs
    return agents


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
        subagents=_read_subagents(path, read),
        compactions=match(kept, _read_compactions(path, read)),
    )
    build.add_file(kept)
    build.finish()
    warnings, extra = outcome(lines, recs, gone, build, read, path)
    build.run.extra.update(extra)
    doc = build.run.document(path, NAME, warnings)
    return dataclasses.replace(doc, torn=True) if lines.torn else doc


def claude_records(lines: Lines, path: str) -> list[dict[str, Any]]:
    """The decoded entries; ``LoadError`` when none is a Claude Code entry."""
    recs = [rec for _n, rec in lines.records]
    if not any(is_claude_record(rec) for rec in recs):
        raise LoadError(path, "not a Claude Code transcript (no user, assistant or summary entry)")
    return recs


def outcome(
    lines: Lines,
    recs: list[dict[str, Any]],
    gone: set[int],
    build: Builder,
    read: list[str],
    path: str,
    facts: SessionFacts | None = None,
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The warnings and ``Document.extra`` of a finished fold (``read``: what reading the
    files beside the session said; ``facts``: those of the entries taken so far)."""
    warnings = [f"line {b['line']} cannot be read ({b['cause']}); kept raw" for b in lines.bad]
    if gone:
        warnings.append(
            f"{len(gone)} entries of a rewound branch (the conversation went back and took "
            "another prompt) are not steps; kept raw"
        )
    warnings += read
    if build.unknown:
        kinds = sorted({str(r.get("type")) for r in build.unknown})
        warnings.append(
            f"{len(build.unknown)} entr{'y' if len(build.unknown) == 1 else 'ies'} of a type "
            f"this reader does not know ({', '.join(kinds)}), kept raw in the raw view of the step beside them"
        )
    extra = dict(
        records=build.records,
        unknown=lines.bad + build.unknown,
        other=build.other,
        summaries=build.summaries,
        abandoned=[recs[i] for i in sorted(gone)],
        session=(facts or SessionFacts()).take(recs).info(build, path),
    )
    return tuple(warnings), extra


class SessionFacts:
    """What the session says about itself (the first value each field has), gathered as
    its entries are read (a live tab takes only the new ones)."""

    KEYS = ("sessionId", "cwd", "gitBranch", "version")

    def __init__(self) -> None:
        self.first = dict.fromkeys(self.KEYS, "")
        self.title = ""  # the last custom title
        self.models: set[str] = set()
        self.taken = 0  # entries taken

    def take(self, recs: list[dict[str, Any]]) -> SessionFacts:
        """Take the entries past those taken already."""
        for rec in recs[self.taken :]:
            for key in [k for k, v in self.first.items() if not v]:
                self.first[key] = s(rec.get(key))
            self.title = s(rec.get("customTitle")) or self.title
            if rec.get("type") == "assistant":
                model = s(d(rec.get("message")).get("model"))
                if model and not model.startswith("<"):
                    self.models.add(model)
        self.taken = len(recs)
        return self

    def info(self, build: Builder, path: str) -> dict[str, Any]:
        info: dict[str, Any] = {"project": Path(path).parent.name, **self.first}
        titles = [s(r.get("summary")) for r in build.summaries if s(r.get("summary"))]
        info["title"] = titles[-1] if titles else self.title
        info["first_prompt"] = build.run.episodes[0] if build.run.episodes else ""
        info["models"] = sorted(self.models)
        return info


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
