"""What our own checks share about one document, computed once.

Why one object: the stale, loop and bloat checks all need the harness items
(token estimates, texts), the reconstructed context, placement and the paired
tool calls; building each once keeps a 100,000-effect checkup to one pass each.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from loom_core.doctor.calls import ToolUse, tool_uses
from loom_core.doctor.items import Items
from loom_core.doctor.model import SNIPPET_CHARS, Finding
from loom_core.doctor.placement import Placement
from loom_core.formats.document import Document
from loom_core.views.context import ContextIndex


@dataclass
class Facts:
    doc: Document
    index: ContextIndex
    items: Items
    place: Placement

    @cached_property
    def uses(self) -> list[ToolUse]:
        return tool_uses(self.doc, self.index, self.items.model_values)

    @cached_property
    def use_of_result(self) -> dict[int, ToolUse]:
        return {u.result: u for u in self.uses if u.result is not None}

    def text(self, effect: int) -> str:
        return self.items.texts[self.items.episodes + effect]

    def tokens(self, effect: int) -> int:
        return self.items.tokens[self.items.episodes + effect]

    def result_value(self, effect: int) -> Any:
        return self.doc.result(effect)

    def finding(
        self,
        kind: str,
        severity: str,
        effect: int,
        tokens: int,
        message: str,
        *,
        share: float | None = None,
        snippet_of: int | None = None,
        related: tuple[int, ...] = (),
        targets: tuple[int, ...] = (),
    ) -> Finding:
        """A finding placed at ``effect``; the snippet comes from ``snippet_of`` (default:
        the effect itself); ``targets`` are effect indices to redact."""
        text = self.text(effect if snippet_of is None else snippet_of)
        return Finding(
            kind,
            severity,
            self.place.seq(effect),
            effect,
            tokens,
            tokens / self.items.total if share is None else share,
            message,
            text[:SNIPPET_CHARS],
            len(text) > SNIPPET_CHARS,
            related=related,
            redact_targets=self.place.seqs(sorted(set(targets))),
            model_step=self.place.first_model_step(effect),
        )
