"""The timeline at scale: moving the cursor costs the same whatever the run's length.

pyqtgraph re-runs a view's auto-range (a pass over every item's bounds) and repaints
the whole plot whenever an item tells the view its bounds changed. The cursor is
added with ``ignoreBounds``, so it must never do that; and the bars' bounds are
measured once per data change, not once per repaint.
"""

from __future__ import annotations

from pathlib import Path

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from loom_desktop.widgets.timeline import TimelineWidget


def test_moving_the_cursor_does_not_rerun_the_auto_range(qtbot, sample: Path) -> None:
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(900, 200)
    widget.show()
    widget.set_timeline(build_timeline(load(sample)))
    box = widget.getPlotItem().getViewBox()
    told: list[object] = []
    original = box.itemBoundsChanged
    box.itemBoundsChanged = lambda item: (told.append(item), original(item))[1]
    for step in range(1, 8):
        widget.set_cursor(step)
        qtbot.wait(1)
    assert widget.cursor not in told  # else every move re-ranges and repaints the plot


def test_bar_bounds_are_measured_once_per_data_change(qtbot, sample: Path) -> None:
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.set_timeline(build_timeline(load(sample)))
    bars = widget.bars
    before = bars.boundingRect()
    bars.heights[:] = 0  # a change behind set_data's back is not looked at again
    assert bars.boundingRect() == before
    bars.set_data(bars.heights, bars.kinds, bars.depths, bars.lane)
    assert bars.boundingRect() != before
