"""Panning to the cursor stays inside the run.

A leap to the last step and back to the first (End, then Home) used to pan a view's
width past the run's start: empty space before step 0, the cursor at the right edge,
no step labels (seen in a real window at 100,000 effects).
"""

from __future__ import annotations

from pathlib import Path

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from loom_desktop.widgets.timeline import TimelineWidget
from tests.core.diff.tracegen import model, tool, write


def _long_run(tmp_path: Path, pairs: int) -> Path:
    effects = []
    for k in range(pairs):
        effects.append(model("go", [(f"c{k}", "t", {})], n=k))
        effects.append(tool("t", f"ok {k}", f"c{k}", {}))
    return write(tmp_path / "long.loom.json", effects)


def _view(widget: TimelineWidget) -> tuple[float, float]:
    (x0, x1), _ = widget.getPlotItem().getViewBox().viewRange()
    return x0, x1


def test_leaps_to_the_ends_stop_at_the_run(qtbot, tmp_path: Path) -> None:
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(700, 200)
    widget.show()
    tl = build_timeline(load(_long_run(tmp_path, 600)))
    widget.set_timeline(tl)
    n = len(tl)
    x0, x1 = _view(widget)
    width = x1 - x0
    assert width < n  # the run is longer than the view: a move past it pans
    widget.set_cursor(n - 1)  # End
    x0, x1 = _view(widget)
    assert x0 <= n - 1 <= x1 and x1 <= n - 0.5 + 1e-6, (x0, x1)
    assert abs((x1 - x0) - width) < 1e-6  # a pan, not a zoom
    widget.set_cursor(0)  # Home
    x0, x1 = _view(widget)
    assert x0 >= -0.5 - 1e-6 and x0 <= 0 <= x1, (x0, x1)
    widget.set_cursor(n // 2)  # a leap into the middle keeps the tenth-of-a-view lead
    x0, x1 = _view(widget)
    assert abs(x0 - (n // 2 - 0.1 * width)) < 1e-6, (x0, x1)
