"""Decoders for the load path's structs, and their variants with some fields left raw.

Why: validating 100,000 effects with pydantic costs ~3x a plain ``json.loads``;
msgspec decodes typed scalars and leaves payloads as :class:`msgspec.Raw` views
into the file's bytes, which is several times *faster* than ``json.loads``. The
structs are declared in :mod:`loom_core.formats.structs` (held equal to the pydantic
schema by a test); an index that only needs token counts asks here for a variant
whose text fields stay raw, so it does not pay for decoding texts.
"""

from __future__ import annotations

import types
from functools import cache
from typing import Any

import msgspec


def list_of(item: Any) -> Any:
    """``list[item]`` for an item type built at run time (a checker cannot read that subscript)."""
    return types.GenericAlias(list, (item,))


@cache
def fast_struct(
    struct: type[msgspec.Struct], lazy: frozenset[str] = frozenset()
) -> type[msgspec.Struct]:
    """``struct`` with the fields named in ``lazy`` left raw (defaulting to a raw null);
    ``struct`` itself when none are."""
    if not lazy:
        return struct
    fields = []
    for f in msgspec.structs.fields(struct):
        default = None if f.name in lazy or f.default is msgspec.NODEFAULT else f.default
        fields.append((f.name, msgspec.Raw if f.name in lazy else f.type, default))
    suffix = "".join(sorted(lazy)).title()
    return msgspec.defstruct(
        struct.__name__ + suffix, fields, kw_only=True, gc=False, module=__name__
    )


@cache
def decoder(target: Any) -> msgspec.json.Decoder[Any]:
    """A reusable decoder for a struct (or a type built from structs)."""
    return msgspec.json.Decoder(target)
