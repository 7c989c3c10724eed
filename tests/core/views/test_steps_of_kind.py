"""Jumping to the previous/next step of the same kind agrees with a plain scan."""

from __future__ import annotations

from pathlib import Path

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"


def test_same_kind_jumps_match_a_linear_scan() -> None:
    tl = build_timeline(load(SAMPLE))
    for step in range(len(tl)):
        name = tl.kind_name(step)
        prev = next((s for s in range(step - 1, -1, -1) if tl.kind_name(s) == name), None)
        nxt = next((s for s in range(step + 1, len(tl)) if tl.kind_name(s) == name), None)
        assert tl.steps_of_kind(step) == (prev, nxt), step
