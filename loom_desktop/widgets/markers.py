"""Timeline markers with a level of detail: only what is in view, one per pixel column.

Why: a million-step run has tens of thousands of error and shield markers, and
pyqtgraph's scatter item spends tens of microseconds per point on every ``setData``
(its symbol atlas is kept per point), which froze the window for most of a second
when the run arrived. Markers are one scatter item per kind; each is fed the steps of
its kind inside the visible range, and when there are more than pixel columns, the
first of each column (a column's mark says "at least one here", which is what a
zoomed-out user can see anyway). Zooming in shows every marker exactly.

While the step list is filtered, the markers of the steps it hides go to a faint twin
item, as their bars are drawn faint (:mod:`.bars`): a full-colour mark says "this step
is one the filter shows", never "an error somewhere among the hidden ones".
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg


class MarkerLayer:
    """One marker kind's steps and heights; :meth:`show` feeds its item what is in view."""

    def __init__(self, item: pg.ScatterPlotItem, faint: pg.ScatterPlotItem) -> None:
        self.item, self.faint = item, faint
        self.steps = np.empty(0, np.int64)  # ascending
        self.heights = np.empty(0)
        self.matched: np.ndarray | None = None  # per step: shown by the filter (None: no filter)
        self._shown: tuple[int, int, int] | None = None

    def set_matched(self, matched: np.ndarray | None) -> None:
        """The steps the filter shows (see :meth:`.bars.BarsItem.set_matched`): the next
        :meth:`show` feeds both items again."""
        self.matched = matched
        self._shown = None

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
        lit = self._lit(steps)
        _feed(self.item, *_thinned(steps[lit], heights[lit], x0, x1, columns))
        hidden = ~lit
        if hidden.any() or len(self.faint.data):  # (no feed while it stays empty)
            _feed(self.faint, *_thinned(steps[hidden], heights[hidden], x0, x1, columns))

    def _lit(self, steps: np.ndarray) -> np.ndarray:
        """Which of ``steps`` the filter shows (all without a filter); steps past its end
        (a live run grew since it was filtered) are shown, as their bars are."""
        lit = np.ones(len(steps), bool)
        if self.matched is None:
            return lit
        known = steps < len(self.matched)
        lit[known] = self.matched[steps[known]]
        return lit


def _feed(item: pg.ScatterPlotItem, steps: np.ndarray, heights: np.ndarray) -> None:
    item.setData(x=steps, y=heights)


def _thinned(
    steps: np.ndarray, heights: np.ndarray, x0: float, x1: float, columns: int
) -> tuple[np.ndarray, np.ndarray]:
    """The first marker of each pixel column when there are more markers than columns."""
    if len(steps) > columns:
        span = max(x1 - x0, 1.0)
        bins = ((steps - x0) * (columns / span)).astype(np.int64)
        _, first = np.unique(bins, return_index=True)
        steps, heights = steps[first], heights[first]
    return steps.astype(np.float64), heights
