"""The timeline's step axis: the plot's x is the step-list row, its labels are step numbers.

Why rows on x and seqs on the labels: bars, markers and the cursor must sit on the row
they belong to (user prompt rows take a place too), while a step is called by its
``seq`` everywhere (the step list, the status bar, every command). So ticks are picked
at round seqs and drawn at those steps' rows; a prompt row gets no number.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

from loom_core.views.steps import flag_words, step_label, step_summary
from loom_core.views.timeline import SEQ_LIMIT, Timeline
from loom_desktop.widgets.axis_specs import LabelSizes, Specs, bottom_specs, fits
from loom_desktop.widgets.timeline_data import SeqMap, seq_map

# Where a seq beyond a float's range is placed: see Timeline.seqs; its label still says
# the seq (read from the effect).
__all__ = ["SEQ_LIMIT", "SeqAxis", "step_tip"]


_ROW_LIMIT = 1 << 62  # a view far past any run (a zoom out) still bisects in int64


def _row_bound(rounding: Callable[[float], int], x: float) -> int:
    """``x`` rounded to a whole row (``math.ceil`` or ``math.floor``), within int64."""
    if math.isnan(x):
        return 0
    return int(rounding(min(max(x, -_ROW_LIMIT), _ROW_LIMIT)))


class SeqAxis(pg.AxisItem):
    """A bottom axis whose ticks name steps by seq, placed on their rows."""

    def __init__(self) -> None:
        super().__init__("bottom")
        self.enableAutoSIPrefix(False)  # step numbers are never "x0.001"
        self.row_seq = np.empty(0)  # row -> seq (NaN: a user prompt row)
        self._rows = np.empty(0, dtype=np.int64)  # rows of the effects, in seq order
        self._seqs = np.empty(0)  # their seqs, ascending
        self._ascending = True  # so are the rows (the usual run)
        self._tl: Timeline | None = None
        self._sizes = LabelSizes()
        # Room for a line of step numbers from the start, measured as the labels are
        # (:mod:`.axis_specs`: a line's height x 0.8). Else an empty run's axis, with no
        # label to measure, grew once the first steps came: the plot laid out again and
        # painted twice in the turn that showed them (a live run's first rows waited).
        font = self.style.get("tickFont") or QFont()
        self.textHeight = QFontMetricsF(font).height() * 0.8  # (pyqtgraph starts at 18)
        self._updateHeight()  # noqa: SLF001 - as pyqtgraph's own measure does

    def generateDrawSpecs(self, p: Any) -> Specs | None:  # noqa: N802 - pyqtgraph API
        """The line, ticks and labels to draw (see :mod:`.axis_specs`: pyqtgraph's own
        general version was most of each pan's axis repaint)."""
        return bottom_specs(self, p, self._sizes) if fits(self) else super().generateDrawSpecs(p)

    def set_timeline(
        self, tl: Timeline, in_view_to: float | None = None, mapped: SeqMap | None = None
    ) -> None:
        """Take the row <-> seq mapping of ``tl`` (called whenever the plot is fed); the
        seqs were read off the effects by the timeline's builder, in the worker.
        ``in_view_to``: the last x in view, when the plot is appended to: the labels are
        drawn again only if a row up to there got a new one (a repaint of the axis was
        most of an appended refresh's CPU). ``mapped``: :func:`seq_map` of ``tl``,
        computed ahead off the GUI thread (30-60 ms of CPU at 1,000,000 steps)."""
        self._tl = tl
        before = self.row_seq
        row_seq, rows, seqs, ascending = mapped if mapped is not None else seq_map(tl)
        self.row_seq, self._rows, self._seqs = row_seq, rows, seqs
        self._ascending = ascending
        n = len(before)
        if (
            in_view_to is not None
            and in_view_to < n - 0.5  # the new rows are out of view
            and np.array_equal(before, row_seq[:n], equal_nan=True)
        ):
            return  # the labels are the same
        self.picture = None  # redraw the labels
        self.update()

    def _in_view(self, lo: float, hi: float) -> slice | np.ndarray:
        """The effects whose rows are in ``lo..hi``: a slice found by bisection when rows
        ascend with seqs (every ordinary run: no pass over a million rows per repaint),
        else a mask."""
        rows = self._rows
        # as whole rows: a float bound made numpy cast every row to float first (a copy
        # of the run's rows per call: 2 ms of each pan's axis repaint at 1,000,000 steps)
        first_row, last_row = _row_bound(math.ceil, lo), _row_bound(math.floor, hi)
        if self._ascending:
            first = int(np.searchsorted(rows, first_row, side="left"))
            return slice(first, int(np.searchsorted(rows, last_row, side="right")))
        return (rows >= first_row) & (rows <= last_row)

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[Any]:  # noqa: N802
        """Round seqs in view, as rows: pyqtgraph picks the spacing over the seq range.

        Where the run covers only part of the view (past its end, after End or a far
        jump to its last steps, they take a tenth of it), a spacing picked for the whole
        width put a label on every step there, drawn over each other: the spacing is
        picked for the part the run covers, and where that is under half the view, a
        level whose labels would be closer than one label's width is left out (when none
        is left, the last step in view keeps its number)."""
        lo, hi = sorted((minVal, maxVal))
        shown = self._in_view(lo, hi)
        seqs = self._seqs[shown]
        if not len(seqs):
            return []
        rows = self._rows[shown]
        covered = (float(rows.max()) - float(rows.min()) + 1.0) / max(hi - lo, 1.0)
        levels = []
        pixels = size * min(covered, 1.0)  # what the run's part of the view is wide
        for spacing, values in super().tickValues(seqs[0] - 0.5, seqs[-1] + 0.5, pixels):
            wanted = np.array([v for v in values if float(v).is_integer()])  # zoomed in: 0.5s
            if not len(wanted):
                continue
            at = np.searchsorted(self._seqs, wanted)
            found = at < len(self._seqs)
            at, wanted = at[found], wanted[found]
            hit = at[self._seqs[at] == wanted]  # a seq the run lacks gets no tick
            levels.append((max(spacing, 1.0), self._rows[hit].astype(np.float64).tolist()))
        if not levels and len(seqs) <= 20:  # a step or two: pyqtgraph's spacing is < 1
            levels.append((1.0, rows.astype(np.float64).tolist()))
        if covered < 0.5 and levels:  # the run ends (or starts) well inside the view
            room = self._label_px(seqs) / (size / max(hi - lo, 1.0))  # a label's width, in rows
            levels = [level for level in levels if level[0] >= room] or [(1.0, [float(rows.max())])]
        return levels

    def _label_px(self, seqs: np.ndarray) -> float:
        """About the width of the widest of these seqs' labels, with a gap, in pixels."""
        widest = str(int(max(abs(seqs[0]), abs(seqs[-1]))))
        return QFontMetricsF(self.style.get("tickFont") or QFont()).horizontalAdvance(widest + "00")

    def tickStrings(
        self,
        values: list[float],
        scale: float,  # noqa: N802
        spacing: float,
    ) -> list[str]:
        # one lookup for all of them, then plain floats: numpy scalars per tick were about
        # two thirds of this (it runs for every text level of every pan)
        rows = np.rint(np.asarray(values, dtype=np.float64)).astype(np.int64)
        inside = (rows >= 0) & (rows < len(self.row_seq))
        seqs = np.full(len(rows), np.nan)
        seqs[inside] = self.row_seq[rows[inside]]
        out = []
        for row, seq in zip(rows.tolist(), seqs.tolist(), strict=True):
            if seq != seq:  # NaN: a user prompt row, or no row
                out.append("")
            elif abs(seq) >= SEQ_LIMIT and self._tl is not None:  # placed at the limit
                out.append(str(self._tl.doc.effects[self._tl.effect_of[row]].seq))
            else:
                out.append(str(int(seq)))
        return out


def step_tip(tl: Timeline, row: int) -> str:
    """The timeline's tooltip for a row: its step number, kind, tokens, cost and summary."""
    tokens = tl.tokens_in[row] + tl.tokens_out[row]
    cost = tl.cost_text(row)  # the step list's and status bar's words for the same step
    parts = (
        ([step_label(tl, row)] if tl.effect_of[row] >= 0 else [])  # a prompt: its kind names it
        + [tl.kind_name(row)]
        + ([f"{tokens:,} tokens"] if tokens else [])
        + ([cost] if cost else [])
        + flag_words(tl.flags[row])
    )
    return " · ".join(parts) + "\n" + step_summary(tl, row, 100)
