"""The load path's structs stay equal to the pydantic schema (loom_core.formats.structs).

Why: the structs are declared by hand so that opening a run does not import pydantic, and
the pydantic models remain the format's description. A field added, renamed, retyped or
given another default on one side and not the other fails here.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel

from loom_core.formats import schema, structs

_SCALARS = (int, float, str, bool)

# effects: decoded by msgspec, payloads raw (the derivation the load path always used)
EFFECTS = {
    schema.Usage: structs.FastUsage,
    schema.ToolCall: structs.FastToolCall,
    schema.ModelResult: structs.FastModelResult,
    schema.EffectMeta: structs.FastEffectMeta,
    schema.EffectEntry: structs.FastEffectEntry,
    schema.JournalEffect: structs.FastJournalEffect,
}
# headers: checked value by value, so each keeps the model's exact annotation
HEADERS = {
    schema.ShieldEvent: structs.ShieldEvent,
    schema.Workspace: structs.Workspace,
    schema.TraceHeader: structs.TraceHeader,
    schema.JournalHeader: structs.JournalHeader,
}


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _union(members: list[Any]) -> Any:
    union = members[0]
    for m in members[1:]:
        union = union | m
    return union


def _fast_type(annotation: Any) -> Any:
    """What msgspec decodes for a model's annotation: scalars, nested structs, else raw."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        mapped = [_fast_type(a) for a in members]
        if any(m is msgspec.Raw for m in mapped) or not mapped:
            return msgspec.Raw
        return _union(mapped)
    if annotation in _SCALARS:
        return annotation
    if _is_model(annotation):
        return EFFECTS[annotation]
    if origin is list:
        (item,) = typing.get_args(annotation) or (Any,)
        if _is_model(item) or item in _SCALARS:
            return list[_fast_type(item)]  # type: ignore[misc]
    return msgspec.Raw


def _header_type(annotation: Any) -> Any:
    """The model's annotation with each nested model replaced by its struct."""
    if _is_model(annotation):
        return HEADERS[annotation]
    args = typing.get_args(annotation)
    if not args:
        return annotation
    mapped = tuple(_header_type(a) for a in args)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return _union(list(mapped))
    return types.GenericAlias(origin, mapped)


def _fields(struct: Any) -> list[msgspec.structs.FieldInfo]:
    return [f for f in msgspec.structs.fields(struct) if f.name != "model_extra"]


def _default(field: msgspec.structs.FieldInfo) -> Any:
    if field.default_factory is not msgspec.NODEFAULT:
        return field.default_factory()
    return field.default


@pytest.mark.parametrize("model", list(EFFECTS), ids=lambda m: m.__name__)
def test_each_effect_struct_has_its_models_fields_types_and_defaults(model: Any) -> None:
    struct = EFFECTS[model]
    declared = {f.name: f for f in _fields(struct)}
    assert list(declared) == list(model.model_fields)
    for name, field in model.model_fields.items():
        got = declared[name]
        assert got.encode_name == (field.alias or name), name
        fast = _fast_type(field.annotation)
        assert got.type == (fast if fast is msgspec.Raw else fast | None), name
        default = None if field.default_factory is not None else field.default
        assert _default(got) == default, name


@pytest.mark.parametrize("model", list(HEADERS), ids=lambda m: m.__name__)
def test_each_header_struct_has_its_models_exact_annotations_and_defaults(model: Any) -> None:
    struct = HEADERS[model]
    declared = {f.name: f for f in _fields(struct)}
    assert list(declared) == list(model.model_fields)
    for name, field in model.model_fields.items():
        got = declared[name]
        assert got.encode_name == (field.alias or name), name
        assert got.type == _header_type(field.annotation), name
        assert _default(got) == field.get_default(call_default_factory=True), name


def test_every_model_that_keeps_unknown_members_is_mirrored_as_keeping_them() -> None:
    for model, struct in HEADERS.items():
        assert model.model_config.get("extra") == "allow"
        assert "model_extra" in struct.__struct_fields__
