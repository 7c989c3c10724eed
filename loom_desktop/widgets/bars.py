"""A pyqtgraph item that draws one bar per step, only for what is on screen.

Why not pyqtgraph's own items: a filled step curve redraws its whole path on
every repaint and its clip-to-view breaks step mode, and BarGraphItem builds a
picture of every bar up front. This item paints only the visible steps; when
there are more steps than pixels it draws, per pixel column, the tallest bar of
that column in its kind's colour. It is not cached by the view: what it draws
depends on the view's range, and Qt moves a cached drawing with a pan without
asking the item again, so the steps a pan or a live run's growth brought into
view stayed blank (gaps in a followed live run's bars). Sub-agent depth lanes
hang below zero.
While the step list is filtered, the steps it hides are drawn faint.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt.internals import PrimitiveArray
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter

EMPTY_TOP = 100.0  # tokens an empty timeline's axis spans (not the -1..1 of nothing)
FAINT_ALPHA = 50  # a bar the filter hides: its colour at this opacity (of 255)


class BarsItem(pg.GraphicsObject):
    """Bars at x = step, height = ``heights[step]``, coloured by ``kinds[step]``."""

    def __init__(self, colors: list[QColor], lane_colors: list[QColor]) -> None:
        super().__init__()
        self.colors = colors
        self.faint = [QColor(c.red(), c.green(), c.blue(), FAINT_ALPHA) for c in colors]
        self.lane_colors = lane_colors
        self.matched: np.ndarray | None = None  # per step: shown by the filter (None: no filter)
        self.heights = np.zeros(0)
        self.kinds = np.zeros(0, np.uint8)
        self.depths = np.zeros(0, np.uint16)
        self.lane = 1.0
        self.top = EMPTY_TOP  # the y scale's top (a ceiling over the tallest bar)
        self._bounds = QRectF(-0.5, 0.0, 1.0, EMPTY_TOP)
        self._rects = PrimitiveArray(QRectF, 4)  # what paint draws, reused

    def set_data(
        self,
        heights: np.ndarray,
        kinds: np.ndarray,
        depths: np.ndarray,
        lane: float,
        top: float | None = None,
    ) -> None:
        """``top``: the y scale's top (None: the tallest bar)."""
        self.prepareGeometryChange()
        self.heights, self.kinds, self.depths, self.lane = heights, kinds, depths, lane
        self.top = float(heights.max(initial=1.0)) if top is None else top
        self._bounds = self._measure()
        self.update()

    def extend(self, heights: np.ndarray, kinds: np.ndarray, depths: np.ndarray) -> None:
        """The same bars and more after them (a live run grew; the caller checked that the
        first ones, the y scale and the lanes are unchanged): only the new bars' place is
        repainted, nothing when it is out of view (a full repaint was 3 ms at 100,000
        steps, and the plot's other items followed it)."""
        start = len(self.heights)
        self.heights, self.kinds, self.depths = heights, kinds, depths
        bounds = self._measure()
        if bounds != self._bounds:  # its room, rounded up, is full: the scene must know
            self.prepareGeometryChange()
            self._bounds = bounds
        self.update(QRectF(start - 0.5, bounds.top(), len(heights) - start, bounds.height()))

    def dataBounds(  # noqa: N802 - pyqtgraph API
        self,
        ax: int,
        frac: float = 1.0,
        orthoRange: object = None,  # noqa: N803
    ) -> tuple[float, float]:
        """The bars' extent (the y auto-range, View All): the bounding rectangle has room
        for bars to come, so a live run's growth does not move it."""
        if ax == 0:
            return (-0.5, max(len(self.heights), 1) - 0.5)
        return (self._bounds.top(), self._bounds.bottom())

    def set_matched(self, matched: np.ndarray | None) -> None:
        """The steps the filter shows (a bool per step; None: no filter, all at full colour).
        Steps past its end (a live run grew since it was filtered) are drawn in full."""
        self.matched = matched
        self.update()

    def _measure(self) -> QRectF:
        """The bounds, worked out once per data change: Qt and pyqtgraph ask for them
        several times per repaint, and a scan of a million bars each time would make
        every cursor move cost as much as the run is long."""
        n = len(self.heights)
        if not n:
            return QRectF(-0.5, 0.0, 1.0, EMPTY_TOP)
        bottom = -self.lane * (int(self.depths.max(initial=0)) + 1)
        room = 1 << (n - 1).bit_length()  # the next power of two: see extend
        return QRectF(-0.5, bottom, room, self.top - bottom)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        return QRectF(self._bounds)

    def _visible(self) -> tuple[int, int, int]:
        """First and last visible step and the bin size (steps per pixel column)."""
        n = len(self.heights)
        view = self.getViewBox()
        if view is None or not n:
            return 0, n, 1
        (x0, x1), _ = view.viewRange()
        first, last = max(0, int(np.floor(x0))), min(n, int(np.ceil(x1)) + 1)
        px = self.pixelWidth() or 1.0
        return first, last, max(1, int(px))

    def paint(self, painter: QPainter, *_args: object) -> None:
        first, last, binsize = self._visible()
        if last <= first:
            return
        heights = self.heights[first:last]
        kinds = self.kinds[first:last]
        depths = self.depths[first:last]
        starts = np.arange(0, len(heights), binsize)
        if binsize > 1:
            tallest = tallest_of_bins(heights, binsize)
            depth = np.maximum.reduceat(depths, starts)
        else:
            tallest, depth = starts, depths
        xs = first + starts - 0.5
        width = float(binsize)
        shown = self._shown(first, last, starts)
        tops = heights[tallest]
        painter.setPen(Qt.PenStyle.NoPen)
        for code in np.unique(kinds[tallest]):
            for lit, palette in ((True, self.colors), (False, self.faint)):
                pick = (kinds[tallest] == code) & (shown == lit) & (tops > 0)
                painter.setBrush(palette[int(code)])
                self._draw(painter, xs[pick], 0.0, width, tops[pick])
        for d, color in enumerate(self.lane_colors, start=1):
            on = depth >= d
            if on.any():
                painter.setBrush(color)
                self._draw(painter, xs[on], -self.lane * d, width, self.lane * 0.7)

    def _draw(
        self, painter: QPainter, xs: np.ndarray, y: float, width: float, heights: np.ndarray | float
    ) -> None:
        """Rectangles at ``xs`` from ``y``, written into one array Qt reads as QRectFs:
        a QRectF object per bar took most of a pan's bar repaint (400 bars in view)."""
        if not len(xs):
            return
        self._rects.resize(len(xs))
        rects = self._rects.ndarray()  # x, y, width, height per rectangle
        rects[:, 0] = xs
        rects[:, 1] = y
        rects[:, 2] = width
        rects[:, 3] = heights
        painter.drawRects(*self._rects.drawargs())

    def _shown(self, first: int, last: int, starts: np.ndarray) -> np.ndarray:
        """Per drawn column: whether the filter shows a step in it (all True unfiltered)."""
        if self.matched is None:
            return np.ones(len(starts), bool)
        visible = np.ones(last - first, bool)
        known = self.matched[first:last]
        visible[: len(known)] = known
        return np.logical_or.reduceat(visible, starts)


def tallest_of_bins(heights: np.ndarray, binsize: int) -> np.ndarray:
    """Per bin of ``binsize`` steps (the last may be shorter), the step of its tallest bar,
    the first of equals. In one pass over a reshaped array: without a cache the bars are
    painted again under the cursor at every move, and a loop per pixel column was
    milliseconds with a million steps in view."""
    whole = len(heights) // binsize * binsize
    firsts = np.arange(0, whole, binsize)
    tallest = heights[:whole].reshape(-1, binsize).argmax(axis=1) + firsts
    if whole < len(heights):
        tallest = np.append(tallest, whole + int(np.argmax(heights[whole:])))
    return tallest
