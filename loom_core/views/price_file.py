"""The user's price override file, named by ``$LOOM_DESKTOP_PRICES``.

Why keep one beside the database: a private deployment, a negotiated rate or a
model newer than the bundled snapshot needs its own price. The file is a JSON
object of model id -> ``[input, output]`` or ``{"input", "output", "cache_read",
"cache_write", "reasoning"}``, all USD per million tokens (a missing cache or
reasoning rate bills those tokens as plain input or output).

A malformed file is never silently ignored: :func:`load_overrides` keeps the
problem (a :class:`~loom_core.errors.LoadError` naming the file and the cause);
the CLI stops with it (exit 2), the GUI shows it in a dialog and uses the
database alone. Only this small file is read here, so checking it is cheap
enough for the GUI thread.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from loom_core.errors import LoadError

OVERRIDE_ENV = "LOOM_DESKTOP_PRICES"
_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")
_PARTS = ("input", "output", "cache_read", "cache_write", "reasoning")


@dataclass(frozen=True)
class TokenRates:
    """USD per million tokens from the override file."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    reasoning: float | None = None


@dataclass(frozen=True)
class Overrides:
    """What the override file gave: rates by model, its path, or the problem with it."""

    rates: dict[str, TokenRates] = field(default_factory=dict)
    path: str = ""
    problem: LoadError | None = None


def normalise(model: str) -> str:
    """Strip a provider prefix and a date stamp so aliases find their row."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    return _SUFFIX.sub("", name)


def _usd(value: Any, what: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(
            f"{what} must be a non-negative number of USD per million tokens, "
            f"not {json.dumps(value)}"
        )
    return float(value)


def _entry(model: str, value: Any) -> TokenRates:
    if isinstance(value, list) and len(value) == 2:
        return TokenRates(_usd(value[0], f"{model!r} input"), _usd(value[1], f"{model!r} output"))
    if isinstance(value, dict) and "input" in value and "output" in value:
        unknown = sorted(set(value) - set(_PARTS))
        if unknown:
            raise ValueError(
                f"{model!r} has unknown rate {unknown[0]!r} (known: {', '.join(_PARTS)})"
            )
        return TokenRates(**{k: _usd(v, f"{model!r} {k}") for k, v in value.items()})
    raise ValueError(f"{model!r} must be [input, output] or an object with input and output")


def parse_overrides(path: Path) -> dict[str, TokenRates]:
    """The rates in ``path``; LoadError naming the file and the first problem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise LoadError(path, f"cannot read the price file: {err.strerror or err}") from err
    except (ValueError, UnicodeDecodeError) as err:
        raise LoadError(path, f"the price file is not valid JSON ({err})") from err
    if not isinstance(data, dict):
        raise LoadError(path, "the price file must be a JSON object of model -> prices")
    try:
        return {str(k): _entry(str(k), v) for k, v in data.items()}
    except ValueError as err:
        raise LoadError(path, f"bad price: {err}") from err


@cache
def load_overrides() -> Overrides:
    """The override file named by the environment (read once per process)."""
    name = os.environ.get(OVERRIDE_ENV, "")
    if not name:
        return Overrides()
    path = Path(name)
    try:
        rates = parse_overrides(path)
    except LoadError as err:
        return Overrides(path=str(path), problem=err)
    return Overrides({**{normalise(k): v for k, v in rates.items()}, **rates}, str(path))


def check_overrides() -> None:
    """Raise the override file's problem, if it has one (the CLI's exit 2)."""
    problem = load_overrides().problem
    if problem is not None:
        raise problem
