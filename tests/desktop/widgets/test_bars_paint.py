"""The bars' paint: the same rectangles as one QRectF per bar, without making one.

A pan (a far jump, a click along the timeline) repaints every bar in view; building a
Python QRectF per bar was most of that repaint. The rectangles are written into one
array Qt reads as QRectFs instead, and must land exactly where the per-bar ones did.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage, QPainter

from loom_desktop.widgets import bars as bars_module
from loom_desktop.widgets.timeline import TimelineWidget


def _image(plot: TimelineWidget, draw: Any) -> QImage:
    """What ``draw(painter)`` paints, in the bars' device coordinates."""
    view = plot.viewport()
    image = QImage(view.size(), QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    painter.setTransform(plot.bars.deviceTransform(plot.viewportTransform()))
    draw(painter)
    painter.end()
    return image


def _per_bar(plot: TimelineWidget, painter: QPainter) -> None:
    """The bars as a QRectF each (every step in view drawn: the sample is zoomed in)."""
    bars = plot.bars
    painter.setPen(Qt.PenStyle.NoPen)
    for step, (height, kind, depth) in enumerate(
        zip(bars.heights.tolist(), bars.kinds.tolist(), bars.depths.tolist(), strict=True)
    ):
        if height > 0:
            painter.setBrush(bars.colors[kind])
            painter.drawRects([QRectF(step - 0.5, 0.0, 1.0, height)])
        for d in range(1, depth + 1):
            painter.setBrush(bars.lane_colors[d - 1])
            painter.drawRects([QRectF(step - 0.5, -bars.lane * d, 1.0, bars.lane * 0.7)])


def test_the_bars_are_drawn_where_a_rectangle_per_bar_draws_them(qtbot, sample_plot) -> None:
    plot = sample_plot
    n = len(plot.bars.heights)
    plot.setXRange(-0.5, n - 0.5, padding=0)
    qtbot.wait(10)
    assert plot.bars._visible()[2] == 1  # one bar per step: comparable to the reference
    drawn = _image(plot, plot.bars.paint)
    assert drawn == _image(plot, lambda painter: _per_bar(plot, painter))
    assert drawn != _image(plot, lambda _painter: None)  # something was drawn


def test_painting_the_bars_makes_no_rectangle_per_bar(
    qtbot, sample_plot, monkeypatch: pytest.MonkeyPatch
) -> None:
    plot = sample_plot
    made: list[object] = []

    def counted(*args: object) -> QRectF:
        made.append(args)
        return QRectF(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(bars_module, "QRectF", counted)
    _image(plot, plot.bars.paint)
    drawn = int((plot.bars.heights > 0).sum())
    assert drawn > 10 and len(made) < drawn // 2


@pytest.mark.parametrize(("steps", "binsize"), [(1000, 7), (1001, 7), (6, 7), (700, 1), (64, 8)])
def test_the_tallest_bar_of_each_column_is_the_first_of_its_tallest(
    steps: int, binsize: int
) -> None:
    """More steps than pixels: each pixel column shows its tallest bar (the first of equal
    ones, as a loop over the columns picks it), the last column's few steps too."""
    rng = np.random.default_rng(steps * binsize)
    heights = rng.integers(0, 5, steps).astype(np.float64)  # many ties
    starts = range(0, steps, binsize)
    loop = [s + int(np.argmax(heights[s : s + binsize])) for s in starts]
    assert bars_module.tallest_of_bins(heights, binsize).tolist() == loop
