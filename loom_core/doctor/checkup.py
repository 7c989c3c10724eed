"""``checkup(doc)``: every finding about a run's context, in ``loom doctor``'s order.

First loom-harness's three findings on its own item model, in its order
(oversized, unused, duplicate, each in item order), so ``loom doctor`` and we
list the same file the same way and a finding's index -- which names its heal
repair, ``redact-<kind>-<index>`` (loom-format.md §10.2) -- is loom-harness's
index too. Then ours, sorted by step, which look at the reconstructed context
and the paired tool calls: stale results, context bloat, tool loops and error
loops. Ours come after so they never shift the harness kinds' indices.
"""

from __future__ import annotations

from pathlib import Path

from loom_core.doctor.bloat import bloat
from loom_core.doctor.facts import Facts
from loom_core.doctor.harness import HarnessFindings
from loom_core.doctor.items import build_items
from loom_core.doctor.loops import loops
from loom_core.doctor.model import Checkup
from loom_core.doctor.placement import Placement
from loom_core.doctor.stale import stale
from loom_core.formats.document import Document
from loom_core.formats.loader import load
from loom_core.views.context import build_context


def checkup(doc: Document) -> Checkup:
    """Check any loaded trace or journal: harness kinds in their order, then ours by step."""
    items = build_items(doc)
    index = build_context(doc)
    place = Placement(doc, index)
    facts = Facts(doc, index, items, place)
    ours = [*stale(facts), *loops(facts), *bloat(facts)]
    ours.sort(key=lambda f: -1 if f.step is None else f.step)
    findings = [*HarnessFindings(items, place).all(), *ours]
    return Checkup(doc.path, items.total, tuple(findings))


def checkup_path(path: str | Path) -> Checkup:
    """Load ``path`` (raises :class:`loom_core.errors.LoadError`) and check it."""
    return checkup(load(path))
