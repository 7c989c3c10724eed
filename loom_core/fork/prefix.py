"""Start a branch from its parent: the replayed prefix and what belongs to it.

Why the care: the prefix is copied byte-for-byte in content, but the members that
summarise a whole run (episodes, a proxy's wire responses and shield decisions) must
describe the prefix only, or the branch would claim user turns, responses and
firewall decisions its own log never reaches.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from loom_core.fork.branch import Branch, new_provenance, parent_header
from loom_core.fork.context import ForkContext
from loom_core.fork.edits import Edit
from loom_core.fork.point import context_index, sidecar_path
from loom_core.formats.document import Document
from loom_core.formats.save import document_dict
from loom_core.proxy.sidecar import read_sidecar
from loom_core.views.timeline import build_timeline


def prefix_episodes(doc: Document, index: int) -> list[str]:
    """The episodes the conversation had reached at log position ``index`` (inclusive)."""
    placed = context_index(doc).episode_before
    n = sum(len(eps) for at, eps in placed.items() if at <= index)
    return doc.episodes[: max(n, 1)]


def prefix_shield_events(
    doc: Document, path: str | Path, index: int, exchanges: int, events: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The parent's shield events that belong to its first ``exchanges`` exchanges.

    The sidecar says exactly which exchange each event came with; without it, an
    event belongs to the model step it is placed at (:mod:`loom_core.views.shield_place`).
    """
    if not events:
        return []
    count = _sidecar_event_count(path, exchanges)
    if count is not None and count <= len(events):
        return events[:count]

    tl = build_timeline(doc)
    keep = {
        i for step, idxs in tl.shield_at.items() if 0 <= tl.effect_of[step] < index for i in idxs
    }
    return [e for i, e in enumerate(events) if i in keep]


def _sidecar_event_count(path: str | Path, exchanges: int) -> int | None:
    side = sidecar_path(path)
    if not side.is_file():
        return None

    try:
        sidecar = read_sidecar(side)
    except OSError:
        return None
    ns = {x.n for x in sidecar.exchanges}
    if not set(range(exchanges)) <= ns:
        return None
    return sum(len(x.shield_events) for x in sidecar.exchanges if x.n < exchanges)


def start_branch(
    doc: Document,
    path: str | Path,
    ctx: ForkContext,
    edit: Edit,
    *,
    provider: str,
    reason: str,
    max_turns: int,
    budget_tokens: int | None,
) -> Branch:
    """A branch holding the parent's prefix and provenance; the edit effect comes next."""
    data = document_dict(doc)
    log = data.get("log") or []
    p = ctx.index
    prov = new_provenance(
        path,
        doc.header.checksum,
        step=ctx.seq,
        turn=ctx.turn,
        prefix=p,
        edit=edit.to_dict(),
        reason=reason or edit.reason,
        provider=provider,
        model=ctx.model,
        source=ctx.source,
        agent=ctx.agent,
    )
    prov.update(
        max_turns=max_turns,
        budget_tokens=budget_tokens,
        request={
            "system": ctx.system,
            "tools": [asdict(t) for t in ctx.tools],
            "max_tokens": ctx.max_tokens,
            "temperature": ctx.temperature,
        },
    )
    style = "proxy" if doc.is_proxy else "harness"
    branch = Branch(style, parent_header(data, prefix_episodes(doc, p)), log[:p], prov)
    if style == "proxy":
        k = sum(1 for e in doc.effects[:p] if e.kind == "model")
        branch.wire = list(data.get("wire") or [])[:k]
        branch.shield_events = prefix_shield_events(
            doc, path, p, k, list(data.get("shield_events") or [])
        )
        prov["wire"] = k
    return branch
