"""loom-harness's three findings (§10.1), with its thresholds, on its item model.

``oversized``: a tool result of 200+ tokens that is 25%+ of the context.
``unused``: a tool result with 3+ words none of which a later answer mentions.
``duplicate``: a non-assistant item of 5+ words whose word set is 90%+ Jaccard
similar to an earlier non-assistant item's (the earliest such is named).
Words are ASCII alphanumeric runs of 5+ characters, lower-cased, compared as
whole words ("alphabet" does not mention "alpha"). Same items, counts, token
numbers and messages as ``loom doctor``; only the duplicate search is faster
(:mod:`.similar`).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace
from functools import cached_property

from loom_core.doctor.items import Items, words
from loom_core.doctor.model import (
    DUPLICATE,
    HIGH,
    OVERSIZED,
    PREFIX_CHARS,
    SNIPPET_CHARS,
    UNUSED,
    WARN,
    Finding,
)
from loom_core.doctor.placement import Placement
from loom_core.doctor.similar import earliest_matches

OVERSIZED_TOKENS = 200
OVERSIZED_SHARE = (1, 4)  # tokens / total >= 1/4
UNUSED_WORDS = 3


class HarnessFindings:
    """Builds the three harness kinds over one document's items."""

    def __init__(self, items: Items, place: Placement) -> None:
        self.items = items
        self.place = place

    def all(self) -> list[Finding]:
        """In loom doctor's order: oversized, unused, duplicate, each in item order."""
        return [*self.oversized(), *self.unused(), *self.duplicate()]

    def oversized(self) -> list[Finding]:
        items, total = self.items, self.items.total
        num, den = OVERSIZED_SHARE
        out = []
        for k, t in enumerate(items.tokens):
            if t >= OVERSIZED_TOKENS and den * t >= num * total and items.is_tool(k):
                pct = t * 100 // total
                out.append(
                    self.finding(
                        OVERSIZED,
                        HIGH,
                        k,
                        f"{items.kinds[k]} result is {t} tokens ({pct}% of context)",
                    )
                )
        return out

    def unused(self) -> list[Finding]:
        items = self.items
        tool_words: dict[int, frozenset[str]] = {}
        for k in range(items.episodes, len(items)):
            ws = self._word_sets[k]
            if ws is not None and len(ws) >= UNUSED_WORDS and items.is_tool(k):
                tool_words[k] = ws
        if not tool_words:
            return []
        last: dict[str, int] = {}  # word -> position of the last answer using it
        for k in range(len(items)):
            if items.is_assistant(k):
                for w in words(items.texts[k]):
                    last[w] = k
        out = []
        for k, ws in tool_words.items():
            if all(last.get(w, -1) < k for w in ws):
                out.append(
                    self.finding(
                        UNUSED,
                        WARN,
                        k,
                        f"{items.kinds[k]} result ({items.tokens[k]} tokens) "
                        "never referenced by any later answer",
                    )
                )
        return out

    def duplicate(self) -> list[Finding]:
        items = self.items
        out = []
        for k, j in enumerate(earliest_matches(self._word_sets)):
            if j is not None:
                found = self.finding(
                    DUPLICATE,
                    WARN,
                    k,
                    f"{items.kinds[k]} content nearly identical to earlier {items.kinds[j]}",
                )
                out.append(replace(found, note=self.where(j)))
        return out

    def where(self, k: int) -> str:
        """Where item ``k`` entered, as words that end a message: `` at step 6``, or
        `` in the user prompt before step 1`` (a prompt has no number of its own)."""
        effect = self.items.effect_of(k)
        if effect is not None:
            return f" at step {self.place.seq(effect)}"
        before = self.place.episode_effect(k)
        return "" if before is None else f" in the user prompt before step {self.place.seq(before)}"

    @cached_property
    def _word_sets(self) -> list[frozenset[str] | None]:
        """Each non-assistant item's words (``None`` for assistant items), computed once."""
        items = self.items
        return [None if items.is_assistant(k) else words(t) for k, t in enumerate(items.texts)]

    # -- one finding ----------------------------------------------------------
    def finding(self, kind: str, severity: str, k: int, message: str) -> Finding:
        items, place = self.items, self.place
        text = items.texts[k]
        effect = items.effect_of(k)
        episode = k if effect is None else None
        if effect is not None:
            step: int | None = place.seq(effect)
        else:
            b = place.episode_effect(k)
            step = None if b is None else place.seq(b)
        prefix = text[:PREFIX_CHARS]
        return Finding(
            kind,
            severity,
            step,
            effect,
            items.tokens[k],
            items.tokens[k] / items.total,
            message,
            text[:SNIPPET_CHARS],
            len(text) > SNIPPET_CHARS,
            episode,
            redact_targets=self.redact_targets(prefix),
            redact_prefix=prefix,
            model_step=place.first_model_step(effect, episode),
        )

    @cached_property
    def _prefixes(self) -> tuple[list[str], list[int]]:
        """Effect items sorted by their first 48 characters, for prefix look-ups."""
        items = self.items
        pairs = sorted(
            (items.texts[k][:PREFIX_CHARS], k) for k in range(items.episodes, len(items))
        )
        return [p for p, _ in pairs], [k for _, k in pairs]

    def redact_targets(self, prefix: str) -> tuple[int, ...]:
        """Seqs of the effects whose item starts with ``prefix`` (what harness heal redacts);
        one shared tuple per prefix (thousands of copies of one result share it)."""
        cached = self._targets.get(prefix)
        if cached is None:
            cached = self._targets[prefix] = self._find_targets(prefix)
        return cached

    @cached_property
    def _targets(self) -> dict[str, tuple[int, ...]]:
        return {}

    def _find_targets(self, prefix: str) -> tuple[int, ...]:
        keys, ks = self._prefixes
        out = []
        for pos in range(bisect_left(keys, prefix), len(keys)):
            if not keys[pos].startswith(prefix):
                break
            effect = self.items.effect_of(ks[pos])
            assert effect is not None  # _prefixes holds effect items only
            out.append(self.place.seq(effect))
        return tuple(sorted(out))
