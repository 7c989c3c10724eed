"""What a Claude Code session's reads share: the files beside the transcript, its
entries, the facts it states about itself and a finished fold's warnings and extras.

Why apart from :mod:`.claude_code`: both the whole read there and the live tab's resumed
fold (:mod:`.claude_resume`) finish a fold the same way; the reader imports the resumed
parser for its live tabs, so what both need lives here rather than in either.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from loom_core.errors import LoadError
from loom_core.formats.claude_build import Builder
from loom_core.formats.claude_compact import Compaction
from loom_core.formats.claude_records import Lines, d, is_claude_record, parse_lines, s

NAME = "claude-code"


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


def compaction_files(path: str) -> list[Path]:
    """The compaction calls Claude Code wrote beside the transcript
    (``<session>/subagents/agent-acompact-*.jsonl``, :mod:`.claude_compact`)."""
    folder = Path(path).with_suffix("") / "subagents"
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [folder / n for n in names if n.startswith("agent-acompact") and n.endswith(".jsonl")]


def read_compactions(path: str, warnings: list[str]) -> list[Compaction]:
    calls = []
    for file in compaction_files(path):
        try:
            lines = parse_lines(file.read_bytes())
        except OSError as err:
            warnings.append(f"compaction file {file.name} cannot be read ({err.strerror or err})")
            continue
        calls.append(Compaction.of([rec for _n, rec in lines.records]))
    return calls


def read_subagents(path: str, warnings: list[str]) -> dict[str, list[dict[str, Any]]]:
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
