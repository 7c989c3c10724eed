"""A dated, editable price table: USD per million tokens, per model.

loom-harness records tokens but never money; showing cost is one of our
differences. Prices change, so the table carries the date it was checked and a
user file can override or extend it. A model that is not in the table is
*unpriced*: its cost is unknown (``None``), never silently zero. Model ids match
exactly, after removing a trailing date stamp or ``-latest`` (so
``claude-sonnet-4-5-20250929`` is priced as ``claude-sonnet-4-5``, while an
unknown ``claude-opus-4-8`` is not mistaken for ``claude-opus-4``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

AS_OF = "2026-03-21"  # the newest published list these rows were checked against

# model id: (input USD / 1M tokens, output USD / 1M tokens)
PRICES: dict[str, tuple[float, float]] = {
    # Anthropic
    "claude-opus-4-6": (5.0, 25.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-opus": (15.0, 75.0),
    "claude-3-haiku": (0.25, 1.25),
    # OpenAI
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "o3": (2.0, 8.0),
    "o3-mini": (1.1, 4.4),
    "o4-mini": (1.1, 4.4),
    "o1": (15.0, 60.0),
}

_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")
_OVERRIDE_ENV = "LOOM_DESKTOP_PRICES"


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input_per_m: float
    output_per_m: float

    def cost(self, input_tokens: float, output_tokens: float) -> float:
        return (input_tokens * self.input_per_m + output_tokens * self.output_per_m) / 1e6


def _user_prices() -> dict[str, tuple[float, float]]:
    """Overrides from the JSON file named by ``$LOOM_DESKTOP_PRICES`` ({model: [in, out]})."""
    path = os.environ.get(_OVERRIDE_ENV)
    if not path or not Path(path).is_file():
        return {}
    try:
        data = json.loads(Path(path).read_text())
        return {str(k): (float(v[0]), float(v[1])) for k, v in data.items()}
    except (ValueError, TypeError, IndexError, KeyError, OSError):
        return {}


@cache
def table() -> dict[str, tuple[float, float]]:
    """The effective table: built-in prices updated by the user's file."""
    return {**PRICES, **_user_prices()}


def normalise(model: str) -> str:
    """Strip provider prefixes and date stamps so aliases find their row."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    return _SUFFIX.sub("", name)


def price_of(model: object) -> Price | None:
    """The price of ``model`` or ``None`` when it is not in the table."""
    if not isinstance(model, str) or not model:
        return None
    return _price(model)


@cache
def _price(model: str) -> Price | None:
    row = table().get(model) or table().get(normalise(model))
    return Price(*row) if row else None


def call_cost(model: object, input_tokens: float, output_tokens: float) -> float | None:
    """USD of one model call; ``None`` when it spent tokens on an unpriced model."""
    price = price_of(model)
    if price is None:
        return None if (input_tokens or output_tokens) else 0.0
    return price.cost(input_tokens, output_tokens)
