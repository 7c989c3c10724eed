"""What a plot shows at each step's bar, read from its pixels, against a plot fed the
whole run at once (the appending and panning paths draw what a fresh plot draws)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF

from loom_core.views.timeline import Timeline
from loom_desktop.widgets.timeline import TimelineWidget


def bar_colours(widget: TimelineWidget) -> list[str]:
    """The colour at the middle of every step's bar in the plot's view, as drawn."""
    image = widget.grab().toImage()
    view = widget.getPlotItem().getViewBox()
    (x0, x1), _ = view.viewRange()
    heights = widget.bars.heights
    colours = []
    for step in range(max(0, int(x0) + 1), min(len(heights), int(x1))):
        at = widget.mapFromScene(view.mapViewToScene(QPointF(step, heights[step] / 2)))
        colours.append(image.pixelColor(at).name())
    return colours


def fed_whole_at_the_same_range(qtbot: Any, shown: TimelineWidget, tl: Timeline) -> list[str]:
    """:func:`bar_colours` of a new plot of ``shown``'s size fed ``tl`` whole, at ``shown``'s
    x range and cursor."""
    fresh = TimelineWidget()
    qtbot.addWidget(fresh)
    fresh.resize(shown.size())
    fresh.show()
    fresh.set_timeline(tl)
    (x0, x1), _ = shown.getPlotItem().getViewBox().viewRange()
    fresh.setXRange(x0, x1, padding=0)
    fresh.set_cursor(int(round(shown.cursor.value())))
    qtbot.wait(1)
    return bar_colours(fresh)
