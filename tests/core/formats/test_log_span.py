"""The log's end is found by a vectorised scan; it must be where ``bytes.find`` finds it.

:func:`progressive._first_close` looks for ``"\\n  ]"`` (a top-level list closing, in
loom-harness's indent-2 layout) by the rare ``]`` bytes first, a window at a time. Any
bytes, any window (a needle cut by a window's edge included), must give ``find``'s answer.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom_core.formats import progressive

PIECES = st.lists(
    st.sampled_from([b"\n", b" ", b"  ", b"]", b"\n  ]", b"a", b"\n   ]"]), max_size=40
)


@settings(max_examples=300, deadline=None)
@given(PIECES, st.integers(0, 20), st.integers(0, 200))
def test_first_close_is_find(pieces: list[bytes], pos: int, length: int) -> None:
    data = b"".join(pieces)
    pos = min(pos, len(data))
    stop = min(pos + length, len(data))
    assert progressive._first_close(data, pos, stop) == data.find(b"\n  ]", pos, stop)


@settings(max_examples=200, deadline=None)
@given(PIECES, st.integers(1, 9))
def test_log_span_at_any_window(pieces: list[bytes], window: int) -> None:
    data = b'{\n  "log": [' + b"".join(pieces) + b"\n  ]\n}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(progressive, "SCAN_WINDOW", window)
        span = progressive._log_span(data, lambda: False)
    start = data.find(b'\n  "log": [') + len(b'\n  "log": [') - 1
    if data[start + 1 : start + 2] == b"]":
        assert span == (start, start + 2)
    else:
        assert span == (start, data.find(b"\n  ]", start) + 4)
