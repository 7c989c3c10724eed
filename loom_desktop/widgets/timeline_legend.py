"""The timeline's legend: what each bar colour, marker and the orange line mean.

Why only what the run has: twelve kinds, six markers and a line would cover the bars;
a run usually shows three or four of them. The legend sits under the step axis, in as
few rows as the plot's width allows (:meth:`TimelineLegend.fit`: one row wider than the
plot made the whole plot wider than its window, cutting off its right side), and is
rebuilt only when the set of entries changes (a live run's refreshes do not touch it). Its samples are not the plot's own items, and clicking
one does nothing (pyqtgraph's default would hide the item).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from loom_core.views.timeline import KIND_NAMES, Timeline

SPACING = 6  # pixels between a legend's columns


class _Sample(pg.graphicsItems.LegendItem.ItemSample):
    """A legend swatch that ignores clicks (the default toggles the item's visibility)."""

    def mouseClickEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        event.ignore()


class TimelineLegend:
    """Entries for the kinds and markers present in a timeline, plus the cost line."""

    def __init__(
        self,
        plot: pg.PlotItem,
        kind_colors: dict[str, str],
        marks: Sequence[tuple[int, str, str, str]],
        line_pen: Any,
    ) -> None:
        """``marks``: (flag bit, pyqtgraph symbol, colour, words) per marker kind."""
        self.legend = pg.LegendItem(horSpacing=SPACING, labelTextSize="8pt", sampleType=_Sample)
        # a row of its own under the step axis: never over the bars
        plot.layout.addItem(self.legend, 4, 1)
        self.legend.setVisible(False)
        self._kinds = {k: self._swatch("s", kind_colors[k]) for k in KIND_NAMES}
        self._marks = [
            (bit, self._swatch(symbol, color), words) for bit, symbol, color, words in marks
        ]
        self._line = pg.PlotDataItem(pen=line_pen)
        self.entries: tuple[str, ...] = ()
        self.width = 0.0  # the width the legend may take (the plot's)
        self.columns = 0  # the column count last laid out

    @staticmethod
    def _swatch(symbol: Any, color: str) -> pg.ScatterPlotItem:
        return pg.ScatterPlotItem(
            size=10, symbol=symbol, brush=pg.mkBrush(color), pen=pg.mkPen(QColor(color).darker(120))
        )

    def update(self, tl: Timeline, line_words: str) -> None:
        """Show the kinds and markers ``tl`` has, and the line as ``line_words``."""
        # a count per kind code: one pass, where np.unique sorted every step (tens of ms
        # at 1,000,000 steps, on the GUI thread)
        counts = np.bincount(np.frombuffer(tl.kind, np.uint8)) if len(tl) else np.zeros(0)
        codes = set(np.flatnonzero(counts).tolist())
        flags = int(np.bitwise_or.reduce(np.frombuffer(tl.flags, np.uint8))) if len(tl) else 0
        items = [(self._kinds[KIND_NAMES[c]], KIND_NAMES[c]) for c in sorted(codes)]
        items += [(sample, words) for bit, sample, words in self._marks if flags & bit]
        if len(tl):
            items.append((self._line, line_words))
        entries = tuple(words for _s, words in items)
        if entries == self.entries:
            return
        self.entries = entries
        self.legend.clear()
        for sample, words in items:
            self.legend.addItem(sample, words)
        self.legend.setVisible(bool(items))
        self.columns = 0  # the entries were added in pyqtgraph's own columns: lay out again
        self.fit(self.width)

    def fit(self, width: float) -> None:
        """As many columns as fit in ``width`` pixels (one row when the plot is wide)."""
        self.width = width
        if not self.legend.items:
            return
        sizes = [  # natural widths: a laid-out label is as wide as its grid column
            s.boundingRect().width() + label.item.boundingRect().width() + 2 * SPACING
            for s, label in self.legend.items
        ]
        columns = max(1, len(sizes))
        margins = 2 * SPACING  # the legend's own, around its grid
        while columns > 1 and _grid_width(sizes, columns) + margins > width:
            columns -= 1
        if columns != self.columns:
            self.columns = columns
            self.legend.columnCount = -1  # pyqtgraph re-lays out only on a change
            self.legend.setColumnCount(columns)


def _grid_width(sizes: list[float], columns: int) -> float:
    """The width of ``sizes`` laid out row by row in ``columns`` aligned columns."""
    return sum(max(sizes[c::columns]) for c in range(columns))
