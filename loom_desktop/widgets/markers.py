"""Timeline markers with a level of detail: only what is in view, one per pixel column.

Why: a million-step run has tens of thousands of error and shield markers, and
pyqtgraph's scatter item spends tens of microseconds per point on every ``setData``
(its symbol atlas is kept per point), which froze the window for most of a second
when the run arrived. Markers are one scatter item per kind; each is fed the steps of
its kind inside the visible range, and when there are more than pixel columns, the
first of each column (a column's mark says "at least one here", which is what a
zoomed-out user can see anyway). Zooming in shows every marker exactly.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg


class MarkerLayer:
    """One marker kind's steps and heights; :meth:`show` feeds its item what is in view."""

    def __init__(self, item: pg.ScatterPlotItem) -> None:
        self.item = item
        self.steps = np.empty(0, np.int64)  # ascending
        self.heights = np.empty(0)
        self._shown: tuple[int, int, int] | None = None

    def set_points(self, steps: np.ndarray, heights: np.ndarray, grown: bool = False) -> None:
        """``grown``: the same points and more after them (a live run grew), so what is in
        view is fed again only if it changed."""
        self.steps, self.heights = steps, heights
        if not grown:
            self._shown = None

    def show(self, x0: float, x1: float, columns: int) -> None:
        """Feed the markers between ``x0`` and ``x1``, at most one per ``columns`` bin."""
        lo, hi = np.searchsorted(self.steps, [np.floor(x0), np.ceil(x1) + 1])
        columns = max(1, columns)
        key = (int(lo), int(hi), columns if hi - lo > columns else 0)
        if key == self._shown:
            return  # the same points as now: setData would rebuild them all
        self._shown = key
        steps, heights = self.steps[lo:hi], self.heights[lo:hi]
        if len(steps) > columns:
            span = max(x1 - x0, 1.0)
            bins = ((steps - x0) * (columns / span)).astype(np.int64)
            _, first = np.unique(bins, return_index=True)
            steps, heights = steps[first], heights[first]
        self.item.setData(x=steps.astype(np.float64), y=heights)
