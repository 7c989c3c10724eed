"""loom-harness's item model of a run's context, the ground its checkup stands on (§10.1).

Why its own model rather than the frames of :mod:`loom_core.views.context`: to agree
with ``loom doctor`` on the same file, the three harness findings must see
exactly the items it sees: every user episode first, then one item per effect
(model effects as their assistant text, any other effect as its result string
or ``json.dumps`` of it), each worth ``max(1, len(text) // 4)`` tokens.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from loom_core.formats.document import Document, text_and_calls

USER = "user"
ASSISTANT = "assistant"
_WORD = re.compile(r"[A-Za-z0-9]{5,}")


def words(text: str) -> frozenset[str]:
    """The words the harness compares: ASCII alphanumeric runs of 5+ chars, lower-cased.

    Lower-casing comes after matching (a Kelvin sign is no ``k`` here).
    """
    found = _WORD.findall(text)
    return frozenset(" ".join(found).lower().split()) if found else frozenset()


def item_text(kind: str, value: Any) -> str:
    """What an effect contributes to the context, as the harness counts it."""
    if kind == "model":
        return text_and_calls(value)[0]
    return value if isinstance(value, str) else json.dumps(value)


def estimate(text: str) -> int:
    """The harness's token estimate of one item."""
    return max(1, len(text) // 4)


@dataclass(frozen=True)
class Items:
    """Episodes then effects: item ``k`` is episode ``k`` for ``k < episodes``, else
    effect ``k - episodes``. ``calls`` keeps the decoded model results (effect index ->
    value) so tool calls need not be decoded twice."""

    kinds: list[str]
    texts: list[str]
    tokens: list[int]
    episodes: int
    total: int
    model_values: dict[int, Any]

    def __len__(self) -> int:
        return len(self.texts)

    def effect_of(self, k: int) -> int | None:
        return None if k < self.episodes else k - self.episodes

    def is_assistant(self, k: int) -> bool:
        return self.kinds[k] == ASSISTANT

    def is_tool(self, k: int) -> bool:
        return self.kinds[k].startswith("tool:")


def build_items(doc: Document) -> Items:
    """Walk the log once, decoding each result once."""
    kinds: list[str] = []
    texts: list[str] = []
    for ep in doc.episodes:
        kinds.append(USER)
        texts.append(ep if isinstance(ep, str) else str(ep))
    model_values: dict[int, Any] = {}
    for i, eff in enumerate(doc.effects):
        kind = eff.kind or ""
        value = doc.result(i)
        if kind == "model":
            model_values[i] = value
            kinds.append(ASSISTANT)
        else:
            kinds.append(kind)
        texts.append(item_text(kind, value))
    tokens = [estimate(t) for t in texts]
    return Items(kinds, texts, tokens, len(doc.episodes), max(1, sum(tokens)), model_values)
