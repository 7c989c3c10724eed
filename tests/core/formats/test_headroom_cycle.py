"""Decoding with headroom leaves no reference cycle behind: the bytes it decoded are freed
when the caller drops them, not at the next run of the cyclic collector (which the window
runs only from a timer, so a live tab's every re-read kept a whole trace's bytes a while)."""

from __future__ import annotations

import gc

import msgspec

from loom_core.formats.tolerant import with_headroom


def test_with_headroom_makes_no_garbage_cycle() -> None:
    decode = msgspec.json.Decoder().decode
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        assert with_headroom(decode, b'{"a": [1, 2, 3]}') == {"a": [1, 2, 3]}
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
