"""msgspec structs derived from the pydantic schema, for the hot load path.

Why: validating 100,000 effects with pydantic costs ~3x a plain ``json.loads``;
msgspec decodes typed scalars and leaves payloads as :class:`msgspec.Raw` views
into the file's bytes, which is several times *faster* than ``json.loads``. To
keep one description of the format the structs are generated from the pydantic
models: same field names, same defaults; scalars keep their type (``None``
always allowed, readers default it), nested models become nested structs, and
anything else (``Any``, dicts, lists of plain values) stays raw until asked for.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

import msgspec
from pydantic import BaseModel

_SCALARS = (int, float, str, bool)


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def list_of(item: Any) -> Any:
    """``list[item]`` for an item type built at run time (a checker cannot read that subscript)."""
    return types.GenericAlias(list, (item,))


def _fast_type(annotation: Any) -> Any:
    """Map one pydantic annotation onto the type msgspec should decode."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        mapped = [_fast_type(a) for a in members]
        if any(m is msgspec.Raw for m in mapped) or len(mapped) == 0:
            return msgspec.Raw
        union: Any = mapped[0]
        for m in mapped[1:]:
            union = union | m
        return union
    if annotation in _SCALARS:
        return annotation
    if _is_model(annotation):
        return fast_struct(annotation)
    if origin is list:
        (item,) = typing.get_args(annotation) or (Any,)
        if _is_model(item):
            return list_of(fast_struct(item))
        if item in _SCALARS:
            return list_of(item)
    return msgspec.Raw


def _default(field: Any) -> Any:
    if field.default_factory is not None:
        return None  # containers: readers treat None as "empty"
    return field.default


@cache
def fast_struct(model: type[BaseModel], lazy: frozenset[str] = frozenset()) -> type[msgspec.Struct]:
    """A msgspec struct with the fields, types and defaults of ``model``.

    Fields named in ``lazy`` stay raw even when they have a precise type: an
    index that only needs token counts should not pay for decoding texts.
    """
    fields = []
    for name, field in model.model_fields.items():
        tp = msgspec.Raw if name in lazy else _fast_type(field.annotation)
        if tp is not msgspec.Raw:  # Raw cannot join a union; a raw null is fine
            tp = tp | None
        fields.append((name, tp, None if name in lazy else _default(field)))
    suffix = "".join(sorted(lazy)).title()
    return msgspec.defstruct(
        "Fast" + model.__name__ + suffix, fields, kw_only=True, gc=False, module=__name__
    )


@cache
def decoder(model: type[BaseModel] | Any) -> msgspec.json.Decoder[Any]:
    """A reusable decoder for a model (or a type built from derived structs)."""
    target = fast_struct(model) if _is_model(model) else model
    return msgspec.json.Decoder(target)
