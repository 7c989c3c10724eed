"""What keeps a recorded exchange's CPU near a bare pass-through's (issue 24).

Only behaviour is checked here, never a time: how fast it is belongs to
``benchmarks/proxy_cpu.py`` and ``benchmarks/proxy_overhead.py``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from loom_core.proxy.session import YOUNG_GC, RecordingSession


@pytest.fixture
def gc_threshold() -> Iterator[tuple[int, ...]]:
    """The process's collector thresholds, restored after the test."""
    saved = gc.get_threshold()
    gc.set_threshold(700, *saved[1:])
    try:
        yield gc.get_threshold()
    finally:
        gc.set_threshold(*saved)


def test_a_dedicated_proxy_collects_the_young_generation_less_often(
    tmp_path: Path, gc_threshold: tuple[int, ...]
) -> None:
    RecordingSession(tmp_path / "a.loom.json").abandon()  # in the desktop: leave it alone
    assert gc.get_threshold() == gc_threshold
    RecordingSession(tmp_path / "b.loom.json", freeze_gc=True).abandon()
    assert gc.get_threshold() == (YOUNG_GC, *gc_threshold[1:])
