"""Read a ``POST /loom/shield/decide`` body, or say in one sentence what is wrong with it.

Why a checker of its own: the body comes from whoever holds the token, and anything it
carries ends up in the trace (``by``, ``reason``, ``edited_input``, ``always_allow``).
A body the JSON parser cannot take (too deep, not UTF-8), or one whose values our own
readers and loom-harness could not read back (lone surrogates, numbers beyond 64 bits
or not finite), is answered with a 400 naming the cause -- never a 500 -- and nothing
reaches the approvals registry.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64  # arrays/objects inside the body, counting the body itself
_INT_RANGE = (-(2**63), 2**64 - 1)  # what msgspec (our readers) can decode
_TEXT_KEYS = ("id", "decision", "by", "reason", "always_allow")


class BadBody(ValueError):
    """The body cannot be used; the message says why (sent back as the 400's error)."""


def _reject_constant(name: str) -> Any:
    raise BadBody(f"request body has {name}, which is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadBody(f"request body has a number out of range ({text[:40]})")
    return value


def _check(value: Any, depth: int, where: str) -> None:
    """Depth, surrogates and integer range, everywhere in the value (iterative per level)."""
    if depth > MAX_DEPTH:
        raise BadBody(f"request body is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        if any("\ud800" <= ch <= "\udfff" for ch in value):
            raise BadBody(f"request body has a lone surrogate escape in {where}")
    elif isinstance(value, bool) or value is None or isinstance(value, float):
        return
    elif isinstance(value, int):
        if not _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            raise BadBody(f"request body has a number out of range in {where}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, depth + 1, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check(key, depth, f"a key of {where}")
            _check(item, depth + 1, f"{where}.{key}" if key.isidentifier() else where)


def _parse(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadBody(f"request body is not UTF-8 (byte {err.start})") from None
    try:
        return json.loads(text or "{}", parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError:
        raise BadBody(f"request body is nested deeper than {MAX_DEPTH} levels") from None
    except BadBody:
        raise
    except ValueError:  # JSONDecodeError, or an integer with too many digits
        raise BadBody("request body is not valid JSON") from None


def decide_body(raw: bytes) -> dict[str, Any]:
    """The decision the body asks for; raises :class:`BadBody` with the reason."""
    body = _parse(raw)
    if not isinstance(body, dict):
        raise BadBody("request body must be a JSON object")
    _check(body, 1, "the body")
    for key in _TEXT_KEYS:
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise BadBody(f"{key!r} must be a string, not {type(value).__name__}")
    return body
