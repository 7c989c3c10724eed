"""``checkup(doc)``: every finding about a run's context, sorted by step.

First loom-harness's three findings on its own item model (so ``loom doctor``
and we agree on the same file), then ours, which look at the reconstructed
context and the paired tool calls: stale results, context bloat, tool loops
and error loops.
"""

from __future__ import annotations

from pathlib import Path

from ..context import build_context
from ..document import Document
from .bloat import bloat
from .facts import Facts
from .harness import HarnessFindings
from .items import build_items
from .loops import loops
from .model import Checkup, Finding
from .placement import Placement
from .stale import stale


def checkup(doc: Document) -> Checkup:
    """Check any loaded trace or journal; findings sorted by step (stable)."""
    items = build_items(doc)
    index = build_context(doc)
    place = Placement(doc, index)
    findings: list[Finding] = HarnessFindings(items, place).all()
    facts = Facts(doc, index, items, place)
    findings += stale(facts)
    findings += loops(facts)
    findings += bloat(facts)
    findings.sort(key=lambda f: -1 if f.step is None else f.step)
    return Checkup(doc.path, items.total, tuple(findings))


def checkup_path(path: str | Path) -> Checkup:
    """Load ``path`` (raises :class:`loom_core.errors.LoadError`) and check it."""
    from ..loader import load

    return checkup(load(path))
