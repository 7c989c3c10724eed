"""The proxy's effect keys, spelled out for speed, are the general ``effect_key`` (§3.4)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from loom_core.formats.canonical import effect_key, proxy_model_key, proxy_tool_key


def test_the_model_keys_loom_harness_records() -> None:
    assert [proxy_model_key(i) for i in range(3)] == [
        "abda62128b13",
        "6cede8233540",
        "3ce9cae5e5cb",
    ]


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_model_key_is_the_general_key(n: int) -> None:
    assert proxy_model_key(n) == effect_key("model", {"n": n})


@given(st.text(), st.text())
def test_tool_key_is_the_general_key(kind: str, tool_use_id: str) -> None:
    assert proxy_tool_key(kind, tool_use_id) == effect_key(kind, {"id": tool_use_id})
