"""The fast canonical text is byte for byte ``json.dumps(sort_keys=True)``: checksums depend on it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom_core.formats import fastcheck
from loom_core.formats.canonical import checksum
from loom_core.formats.fastcanon import FastCanonError, canonical_text

_text = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["", "a,b: c", '"q"\\', "\x7f\x00\x1f\n", "é — 😀", "\u2028", "Z", "key"]
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)


def _reference(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True).encode()


@settings(max_examples=200, deadline=None)
@given(_json, st.sampled_from([None, 2]))
def test_fast_canonical_text_equals_python_json(value: Any, indent: int | None) -> None:
    data = json.dumps(value, indent=indent, ensure_ascii=False).encode()
    assert canonical_text(data) == _reference(json.loads(data))


@pytest.mark.parametrize(
    "data",
    [
        b"[1e16, 1.5e-5, 1E5, -0.0, 5e-324, 0.1, 1.7976931348623157e308]",
        b"[123456789012345678901234567890, -9223372036854775809]",
        b'{"b": 1, "a": {"d": [], "c": {}}, "\xc3\xa9": 2, "Z": [true, null]}',
        b'["\\u0000\\n\\"\\\\\\/ \\u2028 \\ud83d\\ude00 \x7f"]',
        b'{"a": 1, "a": 2}',
    ],
)
def test_edge_cases_equal_python_json(data: bytes) -> None:
    assert canonical_text(data) == _reference(json.loads(data))


@pytest.mark.parametrize("data", [b'["\\ud800"]', b"[NaN]", b"[1e400]"])
def test_what_msgspec_refuses_is_left_to_python(data: bytes) -> None:
    with pytest.raises(FastCanonError):
        canonical_text(data)


def test_the_checksum_without_a_fork_uses_the_fast_path_and_agrees() -> None:
    log = [{"seq": i, "kind": "model", "result": {"text": "ü ✓", "f": 0.5}} for i in range(5)]
    doc: dict[str, Any] = {"version": 2, "log": log, "output": "x"}
    doc["checksum"] = checksum(doc)
    assert fastcheck.serial_checksum(json.dumps(doc, indent=2).encode()) == doc["checksum"]
    assert fastcheck.parallel_checksum(json.dumps(doc).encode()) == doc["checksum"]
    lone = json.dumps({**doc, "log": [*log, {"seq": 5, "result": "\ud800"}]}).encode()
    assert fastcheck.serial_checksum(lone) is None  # msgspec refuses it: the caller uses json
