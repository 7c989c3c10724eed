"""Claude Code's compaction: the summary call it makes of a session, shown where it happened.

Facts relied on ([types] and [subagents] of :mod:`.claude_records`, and the real 2.1.39
sessions of the tests' real-world corpus): when a session's context fills up, Claude
Code asks the model to summarise the conversation. Newer versions write that call to
``<session id>/subagents/agent-acompact-<hex>.jsonl``: the tail of the conversation it was
sent as ``user`` entries hanging (``parentUuid``) off the session's own entries, the
request, and the model's answer as an ``assistant`` entry with its ``usage`` -- billed like
any call. In the session file a ``system`` entry of subtype ``compact_boundary`` marks where
the context was replaced, and the next ``user`` entry (``isCompactSummary``, its
``parentUuid`` the boundary) carries the summary the conversation continues from.

How a run shows it: a loom ``compact`` step at the boundary (loom's record of history
compaction, loom-format.md §1.3), its result the summary, its source records the boundary
and the compaction file's entries, and the call's usage in ``meta.usage`` (counted and
priced once: :mod:`loom_core.views.billed`). A boundary whose call was not written (older
versions) is still a compaction step, with the summary entry's text and no tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loom_core.formats.claude_records import block_text, blocks, d, merged_usage, s


def is_boundary(rec: dict[str, Any]) -> bool:
    return rec.get("type") == "system" and rec.get("subtype") == "compact_boundary"


@dataclass
class Compaction:
    """One compaction call as its file holds it."""

    records: list[dict[str, Any]]
    summary: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    model: str = ""

    @classmethod
    def of(cls, recs: list[dict[str, Any]]) -> Compaction:
        """The call's answer (its text, usage and model) from the file's entries."""
        answers = [r for r in recs if r.get("type") == "assistant"]
        texts = [
            s(b.get("text"))
            for r in answers
            for b in blocks(r.get("message"))
            if b.get("type") == "text"
        ]
        model = next((s(d(r.get("message")).get("model")) for r in answers), "")
        usage = merged_usage(answers) if answers else {}
        return cls(recs, "\n".join(t for t in texts if t), usage, model)


def match(session: list[dict[str, Any]], calls: list[Compaction]) -> dict[str, Compaction]:
    """Boundary uuid -> the compaction call made there: the first boundary after the last
    session entry the call's file hangs from, else (nothing to hang from) the first
    boundary written at or after the call's last entry."""
    place = {s(r.get("uuid")): i for i, r in enumerate(session) if s(r.get("uuid"))}
    boundaries = [(i, r) for i, r in enumerate(session) if is_boundary(r)]
    found: dict[str, Compaction] = {}
    for call in calls:
        anchors = [place[p] for r in call.records if (p := s(r.get("parentUuid"))) in place]
        stamps = [s(r.get("timestamp")) for r in call.records if s(r.get("timestamp"))]
        for i, rec in boundaries:
            uid = s(rec.get("uuid"))
            if uid in found:
                continue
            after = (
                i > max(anchors)
                if anchors
                else bool(stamps) and s(rec.get("timestamp")) >= max(stamps)
            )
            if after:
                found[uid] = call
                break
    return found


def summary_entries(session: list[dict[str, Any]]) -> dict[str, str]:
    """Boundary uuid -> the text of the summary entry the conversation continues from."""
    return {
        s(r.get("parentUuid")): "\n".join(block_text([b]) for b in blocks(r.get("message")))
        for r in session
        if r.get("type") == "user" and r.get("isCompactSummary") is True
    }
