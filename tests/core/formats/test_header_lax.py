"""A header member is accepted, coerced and refused exactly as pydantic's lax mode did.

Why: the trace and journal headers used to be validated by the pydantic models; they are
now checked by ``loom_core.formats.header`` so that opening a run does not import
pydantic. Every field of every header model is given generated JSON values (numbers,
texts that look like numbers or words, lists, objects, nested events) and both must
agree on whether the value is taken and what it becomes. The pydantic models are the
oracle here, and loom-harness 0.33.12 reads these files with them.
"""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from loom_core.errors import LoadError
from loom_core.formats import schema, structs
from loom_core.formats.header import Wrong, coerce
from loom_core.formats.tolerant import validated

MODELS = {
    schema.ShieldEvent: structs.ShieldEvent,
    schema.Workspace: structs.Workspace,
    schema.TraceHeader: structs.TraceHeader,
    schema.JournalHeader: structs.JournalHeader,
}
FIELDS = [(m, name) for m in MODELS for name in m.model_fields]

_SPACES = " \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2003\u3000"
_WORDS = ["true", "True", "TRUE", "yes", "on", "off", "no", "t", "f", "y", "n", "tRuE", "ｔrue"]
_WORDS += ["inf", "-inf", "+Infinity", "nan", "-NaN", "infinit", "0x10", "1e400", "١", "İ"]
numberish = st.text(alphabet="0123456789+-._eE " + _SPACES, max_size=8)
words = st.builds(
    lambda pre, w, post: pre + w + post,
    st.sampled_from(["", " ", "\x1c", "\u3000"]),
    st.sampled_from(_WORDS),
    st.sampled_from(["", " ", "\n", "\x1f"]),
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.sampled_from([0.0, -0.0, 1.0, 2.0**63, -(2.0**63), 9.2e18, 9.3e18, 1e300, 10**400]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=6), numberish, words)
events = st.fixed_dictionaries(
    {},
    optional={
        "ts": scalars,
        "action": scalars,
        "via": scalars,
        "tool": scalars,
        "input": scalars,
        "by": scalars,
        "edited_input": scalars,
    },
)
values = st.recursive(
    st.one_of(scalars, events),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


def _plain(value: Any) -> Any:
    """A validated value as plain data, NaN made comparable."""
    if isinstance(value, BaseModel):
        return _plain({**dict(value), **(value.model_extra or {})})
    if isinstance(value, structs.Open):
        return _plain(value.model_dump())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return (type(value).__name__, value) if isinstance(value, int | float | bool) else value


def _pydantic(model: type[BaseModel], name: str, value: Any) -> Any:
    try:
        return ("ok", _plain(getattr(model.model_validate({name: value}), name)))
    except ValidationError:
        return ("wrong",)


def _ours(model: type[BaseModel], name: str, value: Any) -> Any:
    tp = next(f.type for f in msgspec.structs.fields(MODELS[model]) if f.name == name)
    try:
        return ("ok", _plain(coerce(tp, value)))
    except Wrong:
        return ("wrong",)


@pytest.mark.parametrize(("model", "name"), FIELDS, ids=lambda x: getattr(x, "__name__", x))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=values)
def test_a_member_is_taken_and_coerced_as_pydantic_took_it(
    model: type[BaseModel], name: str, value: Any
) -> None:
    assert _ours(model, name, value) == _pydantic(model, name, value)


_EDGES = [
    True,
    False,
    0,
    1,
    2,
    -1,
    1.0,
    1.5,
    -0.0,
    9.2e18,
    9.3e18,
    2.0**63,
    -(2.0**63),
    10**30,
    10**400,
]
_EDGES += [float("inf"), float("nan"), None, [], ["a"], ["a", 1], {}, {"a": "b"}, {"a": ["x"]}]
_EDGES += ["1", " 1 ", "1.0", "1.00", "1.", "1.5", "1e3", "+1", "-0", "1_000", "_1", "1_", "00012"]
_EDGES += [
    "\u20031",
    "\x1c1",
    "1\x1f",
    "\xa01.5",
    "\x1c1.5",
    "1_0.5",
    "1e0_0",
    ".5",
    "5.",
    "9" * 5000,
]
_EDGES += ["1.0" + "0" * 40, "0x10", "١", *_WORDS, "", " ", "abc", "1\x00", "infinity", "-nan"]
_EDGES += [{"action": "deny", "via": "rule", "edited_input": {}}, [{"action": 5}], [{"ts": "1.5"}]]


@pytest.mark.parametrize(("model", "name"), FIELDS, ids=lambda x: getattr(x, "__name__", x))
def test_the_edge_values_of_each_type_are_taken_as_pydantic_took_them(
    model: type[BaseModel], name: str
) -> None:
    for value in _EDGES:
        assert _ours(model, name, value) == _pydantic(model, name, value), repr(value)


def _old_validated(model: type[BaseModel], values: dict[str, Any]) -> tuple[Any, list[str]]:
    """What the pydantic version reported: the members dropped, in its order, and the rest."""
    values, dropped = dict(values), []
    while True:
        try:
            return _plain(model.model_validate(values)), dropped
        except ValidationError as err:
            name = str(err.errors()[0]["loc"][0])
            if name == "version":
                if values[name] is not None:
                    return "refused", dropped
            else:
                dropped.append(name)
            del values[name]


@settings(max_examples=300, deadline=None)
@given(
    members=st.dictionaries(
        st.sampled_from([*schema.TraceHeader.model_fields, "fork", "extra"]), values, max_size=8
    )
)
def test_a_whole_header_drops_the_same_members_in_the_same_order(members: dict[str, Any]) -> None:
    want, dropped = _old_validated(schema.TraceHeader, members)
    problems: list[str] = []
    raws = {k: json.dumps(v, default=str).encode() for k, v in members.items()}
    try:
        got = _plain(validated(structs.TraceHeader, members, "x", problems, raws))
    except LoadError:
        got = "refused"
    assert got == want
    assert [p.split("'")[1] for p in problems] == dropped


def test_an_unknown_member_reads_as_an_attribute_as_pydantic_gave_it() -> None:
    members = {"version": 2, "fork": {"parent": "a.loom.json"}, "shield_events": [{"x": 1}]}
    old = schema.TraceHeader.model_validate(members)
    new = validated(structs.TraceHeader, members, "x", [])
    assert new.fork == old.fork and new.model_extra == old.model_extra
    assert new.shield_events[0].x == 1 and getattr(new, "nothing", None) is None
