"""``fastdumps`` is byte for byte ``json.dumps``: journal lines and checksums depend on it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom_core.formats.fastdumps import canonical, dumps

_text = st.text(max_size=12) | st.sampled_from(
    ["", "a,b: c", '"q"\\', "\x7f\x00\x1f\n\t\b\f\r", "é — 😀", "\u2028", "\ud800", "1e5"]
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats()
    | _text
)
_keys = _text | st.integers(min_value=-5, max_value=5) | st.booleans()
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_keys, inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(_json)
def test_dumps_is_json_dumps(value: Any) -> None:
    assert dumps(value) == json.dumps(value).encode("ascii")
    try:
        reference = json.dumps(value, sort_keys=True, default=str).encode("ascii")
    except TypeError:  # keys of mixed types cannot be sorted: the same error
        with pytest.raises(TypeError):
            canonical(value)
    else:
        assert canonical(value) == reference


def test_an_effect_line_takes_the_fast_path_and_a_float_does_not() -> None:
    line = {"type": "effect", "seq": 3, "kind": "model", "result": {"text": "é\x7f", "n": []}}
    assert dumps(line) == json.dumps(line).encode()
    for odd in (1e-05, 1e16, float("nan"), float("inf"), 2**70, {1: "a"}):
        assert dumps({"v": odd}) == json.dumps({"v": odd}).encode()
