"""Claude Code transcript lines: tolerant parsing and the facts each record carries.

Claude Code has no published transcript spec, so every fact here says where it came from:

* [hooks] Claude Code's hooks documentation: every hook gets ``transcript_path``, the
  session's JSONL file under ``~/.claude/projects/<project>/<session id>.jsonl``.
* [types] the community type definitions ``pedropaulovc/claude-code-types`` (``index.d.ts``,
  written from real transcripts): entry types ``user`` / ``assistant`` / ``system`` /
  ``summary`` and metadata types (``file-history-snapshot``, ``queue-operation``,
  ``attachment``, ``progress``, ``custom-title``, ``last-prompt``, …); the common fields
  ``uuid``, ``parentUuid``, ``isSidechain``, ``sessionId``, ``timestamp``, ``cwd``,
  ``version``, ``gitBranch``, ``agentId``; ``isCompactSummary`` on user entries;
  ``system`` subtype ``compact_boundary`` with ``compactMetadata {trigger, preTokens}`` and
  ``logicalParentUuid``; ``summary`` entries ``{summary, leafUuid}``; ``toolUseResult`` on
  user entries that deliver a tool result; ``message`` of an assistant entry mirroring the
  Anthropic Messages API response (``id``, ``model``, ``content``, ``stop_reason`` null
  while streaming, ``usage``).
* [turns] the vibenalytics.dev article "Inside Claude Code Transcripts" and
  ``alicoding/claude-parser``'s ``docs/JSONL-STRUCTURE.md``: one assistant response is
  stored as several lines, one per content block, sharing ``message.id`` and repeating
  ``usage`` (so usage is counted once per ``message.id``, not per line).
* [subagents] ``sonnes/chitragupt``'s ``docs/specs/004-subagents.md``: newer versions
  write each sub-agent to ``<session id>/subagents/agent-<agentId>.jsonl`` (every entry
  ``isSidechain: true`` with ``agentId``; ``agent-acompact-*`` files are internal context
  compression), and the Task tool's result names the agent (``agentId: …``); older versions
  wrote sub-agent entries into the session file itself with ``isSidechain: true``.

Why tolerant: the format changes often. A line that is not JSON is kept (number, cause,
text) and skipped; a torn last line (a session being written) is left for the next read;
any field may hold any JSON value, so every access goes through :func:`s`, :func:`d`,
:func:`lst`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

# [types] entry types that are conversation (user/assistant), or known metadata
CONVERSATION = frozenset(("user", "assistant"))
KNOWN_TYPES = frozenset(
    (
        "user",
        "assistant",
        "system",
        "summary",
        "attachment",
        "progress",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "permission-mode",
        "custom-title",
        "ai-title",
        "last-prompt",
        "agent-name",
        "agent-setting",
        "mode",
        "pr-link",
        "saved_hook_context",
        "worktree-state",
        "fork-context-ref",
        "frame-link",
        "relocated",
        "atis-latch",
        "bridge-session",
        "started",
        "result",
    )
)
_decode = msgspec.json.Decoder()


def s(value: Any) -> str:
    """A string field, or "" when it holds anything else."""
    return value if isinstance(value, str) else ""


def d(value: Any) -> dict[str, Any]:
    """An object field, or {} when it holds anything else."""
    return value if isinstance(value, dict) else {}


def lst(value: Any) -> list[Any]:
    """A list field, or [] when it holds anything else."""
    return value if isinstance(value, list) else []


@dataclass
class Lines:
    """A transcript's lines: the records (line number, object), what could not be read."""

    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    bad: list[dict[str, Any]] = field(default_factory=list)  # {line, cause, text}
    torn: bool = False


def parse_lines(data: bytes, first: int = 1) -> Lines:
    """Every line of ``data`` decoded; the last line without a newline is a torn write.
    ``first``: the number of ``data``'s first line (a live tab parses appended lines only)."""
    out = Lines()
    lines = data.split(b"\n")
    if data and not data.endswith(b"\n") and lines[-1].strip():
        out.torn = True  # the writer has not finished it: read it next time
    lines.pop()  # a torn line, or the empty string after the last newline
    for number, line in enumerate(lines, first):
        if not line.strip():
            continue
        try:
            value = _decode.decode(line)
        except (msgspec.DecodeError, RecursionError) as err:
            cause = "nested too deeply" if isinstance(err, RecursionError) else str(err)
            out.bad.append({"line": number, "cause": cause, "text": _preview(line)})
            continue
        if isinstance(value, dict):
            out.records.append((number, value))
        else:
            out.bad.append({"line": number, "cause": "not a JSON object", "text": _preview(line)})
    return out


def _preview(line: bytes) -> str:
    return line[:500].decode("utf-8", "replace")


def is_claude_record(rec: Any) -> bool:
    """A line only Claude Code writes: a known entry type with its session or chain ids
    ([types]: conversation and most metadata entries carry ``sessionId``; ``summary``
    entries carry ``leafUuid`` instead)."""
    if not isinstance(rec, dict):
        return False
    kind = rec.get("type")
    if not isinstance(kind, str) or kind not in KNOWN_TYPES:
        return False
    if kind == "summary":
        return isinstance(rec.get("leafUuid"), str)
    return isinstance(rec.get("sessionId"), str) and (kind not in CONVERSATION or "uuid" in rec)


def blocks(message: Any) -> list[dict[str, Any]]:
    """A message's content blocks; plain string content is one text block."""
    content = d(message).get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in lst(content) if isinstance(b, dict)]


def block_text(content: Any) -> str:
    """The text of a tool result's ``content``: a string, or text blocks joined (an image
    or other block is named, not dropped)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in lst(content):
        kind = s(d(block).get("type"))
        if kind == "text":
            parts.append(s(d(block).get("text")))
        elif kind:
            parts.append(f"[{kind}]")
    return "\n".join(parts)


def prompt_text(rec: dict[str, Any]) -> str:
    """The human text of a user entry ("" for tool results and injected entries)."""
    if rec.get("isMeta") is True or rec.get("isCompactSummary") is True:
        return ""
    texts = [s(b.get("text")) for b in blocks(rec.get("message")) if b.get("type") == "text"]
    return "\n".join(t for t in texts if t)


def merged_usage(fragments: list[dict[str, Any]]) -> dict[str, Any]:
    """One response's usage from its lines ([turns]: each line repeats it, the output count
    growing while streaming): the largest value of each number, other members as last seen."""
    usage: dict[str, Any] = {}
    for rec in fragments:
        for key, value in d(d(rec.get("message")).get("usage")).items():
            old = usage.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                if not isinstance(old, int | float) or value > old:
                    usage[key] = value
            elif value is not None:
                usage[key] = value
    return usage
