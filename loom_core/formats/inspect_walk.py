"""The state of one pass over an Inspect AI sample's events (:mod:`.inspect_sample`).

Kept apart from the event handlers because it is what they share: the spans seen so far
and how many agent spans enclose each (a step's depth), tool events held until their
span ends, the scorers (:mod:`.inspect_score`), and each call's input, decoded from the
sample's message pool only when a view asks for it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec

from loom_core.formats.foreign import RunBuilder
from loom_core.formats.inspect_score import Scoring
from loom_core.formats.inspect_values import LazyMap, decoded

AGENT_SPANS = ("agent", "subtask")  # span types that are an agent: a level of depth


@dataclass
class Walk:
    """The state of one pass over a sample's events."""

    run: RunBuilder
    attachments: dict[str, Any]
    pool: list[msgspec.Raw]
    spans: dict[str, tuple[Any, Any, Any]] = field(default_factory=dict)  # id: parent, type, name
    agents: dict[Any, int] = field(default_factory=dict)  # span id: agent spans around it
    base: int | None = None
    # tool span id: its tool event, the event's bytes and its depth, placed at the span's end
    held: dict[str, tuple[Any, msgspec.Raw, int]] = field(default_factory=dict)
    open_tools: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    pooled: dict[int, Any] = field(default_factory=dict)
    scoring: Scoring = field(default_factory=Scoring)

    def __post_init__(self) -> None:
        self.inputs = LazyMap(self._input)
        self.records = LazyMap(lambda raw: decoded(raw, self.attachments))
        self.calls = 0

    # -- depth ---------------------------------------------------------------------
    def _agents(self, span: Any) -> int:
        """How many agent spans enclose ``span`` (memoised along its chain of parents)."""
        seen = 0
        chain: list[Any] = []
        while span in self.spans and span not in self.agents and seen < 10_000:
            chain.append(span)
            span = self.spans[span][0]
            seen += 1
        count = self.agents.get(span, 0)
        for s in reversed(chain):
            count += self.spans[s][1] in AGENT_SPANS
            self.agents[s] = count
        return count

    def depth(self, ev: Any, extra: int) -> int:
        """Agent spans around ``ev`` beyond those around the first call, plus ``extra``."""
        count = self._agents(ev.span_id)
        if self.base is None:
            self.base = count
        return max(0, count - self.base) + extra

    def agent_name(self, span: Any) -> str | None:
        """The name of the innermost agent span around ``span`` (the step's Agent column)."""
        while span in self.spans:
            parent, kind, name = self.spans[span]
            if kind in AGENT_SPANS and isinstance(name, str):
                return name
            span = parent
        return None

    # -- inputs --------------------------------------------------------------------
    def _pooled(self, i: int) -> Any:
        if i not in self.pooled:
            self.pooled[i] = decoded(self.pool[i], self.attachments)
        return self.pooled[i]

    def _input(self, stored: Any) -> list[Any]:
        """A model call's messages: its inline input, or its ranges into the pool."""
        if isinstance(stored, msgspec.Raw):
            value = decoded(stored, self.attachments)
            return value if isinstance(value, list) else []
        out: list[Any] = []
        for pair in stored:
            if isinstance(pair, list) and len(pair) == 2 and all(type(x) is int for x in pair):
                out.extend(
                    self._pooled(i) for i in range(max(0, pair[0]), min(pair[1], len(self.pool)))
                )
        return out
