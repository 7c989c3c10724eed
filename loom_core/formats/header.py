"""The headers' checks: each member coerced as the pydantic schema's lax mode would.

Why by hand: validating a header with the pydantic models of
:mod:`loom_core.formats.schema` meant importing pydantic (about 90 ms) before a window's
first rows. A header has a few dozen members of a handful of types, so the same rules
are short to state: an ``int`` takes a bool, a whole float inside 64 bits or a text of
digits (``" 1_000 "``, ``"3.00"``); a ``float`` a number or a text Python's ``float``
reads; a ``bool`` 0 or 1 or a word like ``"yes"``/``"off"``; a ``str`` only text; a
list or an object only its own kind, each item checked; ``Any`` anything.
``tests/core/formats/test_header_lax.py`` holds these rules equal to pydantic's on
generated values, so a file is accepted, coerced and refused as before.
"""

from __future__ import annotations

import re
import types
import typing
from functools import cache
from typing import Any, TypeVar

import msgspec

from loom_core.formats.structs import Open

S = TypeVar("S", bound=Open)
_I64 = 2**63
# what pydantic's core (Rust's ``str::trim``) strips around a number: Unicode White_Space
_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_WHOLE = re.compile(r"[+-]?[0-9](?:_?[0-9])*(?:\.0+)?")
_NUMBER = re.compile(
    r"[+-]?(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9](?:_?[0-9])*)(?:[eE][+-]?[0-9](?:_?[0-9])*)?"
)
_NAMED = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


class Wrong(Exception):
    """A value the field's type does not take (the caller names the member)."""


def _int(value: Any) -> int:
    if isinstance(value, int):  # a bool too: True is 1
        return int(value)
    if isinstance(value, float) and value.is_integer() and -_I64 < value < _I64:
        return int(value)
    if isinstance(value, str):
        text = value.strip(_SPACE)
        if _WHOLE.fullmatch(text):
            try:
                return int(text.split(".")[0])
            except ValueError:  # more digits than Python converts
                raise Wrong from None
    raise Wrong


def _float(value: Any) -> float:
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:
            raise Wrong from None
    if isinstance(value, str):
        text = value.strip(_SPACE)
        if _NUMBER.fullmatch(text) or _NAMED.fullmatch(text):
            return float(text)
    raise Wrong


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.isascii():
        word = value.lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    raise Wrong


def _str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise Wrong


_SCALARS = {int: _int, float: _float, bool: _bool, str: _str}


def coerce(tp: Any, value: Any) -> Any:
    """``value`` as a field of type ``tp`` holds it; :class:`Wrong` when it cannot."""
    if tp is Any:
        return value
    if tp in _SCALARS:
        return _SCALARS[tp](value)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(tp):
            return None
        (inner,) = [a for a in typing.get_args(tp) if a is not type(None)]
        return coerce(inner, value)
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(tp)
        return [coerce(item, v) for v in value]
    if origin is dict and isinstance(value, dict):
        _, item = typing.get_args(tp)
        return {k: coerce(item, v) for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, Open) and isinstance(value, dict):
        return build(tp, value)
    raise Wrong


@cache
def _fields(struct: type[Open]) -> tuple[tuple[str, Any], ...]:
    return tuple(
        (f.name, f.type) for f in msgspec.structs.fields(struct) if f.name != "model_extra"
    )


def checked(struct: type[Open], values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The fields ``values`` holds, coerced, and the names of those that failed, in the
    struct's order (the order pydantic reports them in)."""
    out: dict[str, Any] = {}
    wrong: list[str] = []
    for name, tp in _fields(struct):
        if name in values:
            try:
                out[name] = coerce(tp, values[name])
            except Wrong:
                wrong.append(name)
    return out, wrong


def build(struct: type[S], values: dict[str, Any]) -> S:
    """``struct`` from a JSON object, every field checked; :class:`Wrong` on the first bad one."""
    fields, wrong = checked(struct, values)
    if wrong:
        raise Wrong
    names = set(fields)
    names.update(name for name, _ in _fields(struct))
    extra = {k: v for k, v in values.items() if k not in names}
    return struct(**fields, model_extra=extra)
