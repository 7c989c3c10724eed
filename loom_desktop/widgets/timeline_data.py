"""What the timeline plot shows of a run, as numpy arrays (no Qt here).

Why apart from the widget: the plot is fed these whole (``TimelineWidget.feed_steps``, a
part per event-loop turn) or, for a live run that only grew, compares them with what it
shows and appends (:meth:`Shown.grown_to`); both must compute them alike, or an appended
plot would differ from a fresh one.

The y scale is a *ceiling* over the run's tallest bar, on a 26% grid (10 ** (k / 10)):
the lanes' height, the markers' lift and the y range follow the ceiling, not the tallest
bar. An agent's tokens per call grow with its context, so a live run brings a taller step
almost every second; tied to the maximum, each one rescaled the whole plot (a full
redraw). On the grid, the scale changes about once per 26% of growth, and the empty room
above the tallest bar is at most a quarter of the plot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom_core.views.timeline import F_DENIED, F_SHIELD, Timeline, kind_code

LANE = 0.06  # depth lane height as a fraction of the y ceiling
LIFT = 0.04  # a marker's height above its bar, as a fraction of the y ceiling
GRID = 10  # ceilings per factor of ten (10 ** (1 / GRID) = 1.26 apart)


def copy(values: Any, dtype: Any) -> np.ndarray:
    """A numpy copy of a core array. Never keep a view: a live timeline's arrays grow,
    and an array with an exported buffer cannot be resized."""
    return np.frombuffer(values, dtype).copy()


def ceiling(tallest: float, least: float = 1.0) -> float:
    """The y scale's top for a tallest bar of ``tallest`` tokens (or the cost line's top,
    in dollars): the least 10 ** (k / 10) at or above it, and at least ``least``."""
    if tallest <= least:
        return least
    step = math.ceil(round(math.log10(tallest) * GRID, 9))  # 1000 is a ceiling, not 1259
    return float(10.0 ** (step / GRID))


def token_heights(tl: Timeline) -> np.ndarray:
    """Each step's tokens (its size / 4 when it has none), a fork's edit at 0 (see
    :func:`bar_heights`)."""
    tokens = copy(tl.tokens_in, np.int64) + copy(tl.tokens_out, np.int64)
    return np.where(tokens > 0, tokens, copy(tl.size, np.int64) / 4.0)


def bar_heights(height: np.ndarray, kinds: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(heights, lane height, y ceiling). A fork's edit holds the whole edited context, but
    it is no model call and has no tokens: a stub a lane high marks it, not a bar as tall
    as the context it rewrote."""
    edits = kinds == kind_code("edit")
    height[edits] = 0.0
    top = ceiling(float(height.max(initial=1.0)))
    lane = max(top * LANE, 1.0)
    height[edits] = lane
    return height, lane, top


def marker_flags(tl: Timeline) -> np.ndarray:
    """The flags the markers show, per step. ◆ is a denial, ★ any other decision: a denied
    step shows only ◆ (as the step list, the context view and `steps` sign it), not a star
    drawn over it."""
    flags = copy(tl.flags, np.uint8)
    flags[(flags & F_DENIED) != 0] &= np.uint8(~F_SHIELD & 0xFF)
    return flags


def cost_line(tl: Timeline) -> tuple[np.ndarray, str, str]:
    """The right axis's line (cumulative cost, or tokens when unpriced), its axis label
    (short: a low timeline clips a long vertical label) and its legend words."""
    if tl.cost_known:  # the ticks say the dollars
        return copy(tl.cum_cost, np.float64), "cost", "cumulative cost"
    ys = copy(tl.cum_tokens, np.int64).astype(np.float64)
    return ys, "tokens (no price)", "cumulative tokens (cost unknown)"


SeqMap = tuple[np.ndarray, np.ndarray, np.ndarray, bool]


def seq_map(tl: Timeline) -> SeqMap:
    """The step axis's mapping: (each row's seq, NaN for a prompt row; the effects' rows
    in seq order; their seqs, ascending; whether those rows ascend too)."""
    n = len(tl.step_of_effect)
    seqs = np.frombuffer(tl.seqs, np.float64)[:n].copy()  # a copy: a live array grows
    rows = np.frombuffer(tl.step_of_effect, np.int32).astype(np.int64)
    row_seq = np.full(len(tl), np.nan)
    row_seq[rows] = seqs
    if len(seqs) > 1 and not bool(np.all(seqs[1:] >= seqs[:-1])):  # only an odd file
        order = np.argsort(seqs, kind="stable")
        rows, seqs = rows[order], seqs[order]
    return row_seq, rows, seqs, len(rows) < 2 or bool(np.all(rows[1:] >= rows[:-1]))


@dataclass(frozen=True)
class Prepared:
    """All a plot's first feed computes from a loaded run, computed ahead in a worker
    (:func:`prepare`): at 1,000,000 steps the step axis's mapping and the bars' heights
    were 30-60 ms of GUI CPU each, the longest turns before the plot was shown."""

    tl: Timeline
    seq: SeqMap
    shown: Shown
    cost_axis: str  # the right axis's label
    xs: np.ndarray  # the cost line's steps


def prepare(tl: Timeline) -> Prepared:
    """:class:`Prepared` for ``tl``, a run that no longer grows (off the GUI thread)."""
    _ys, axis, _line = cost_line(tl)
    shown = Shown.of(tl)
    return Prepared(tl, seq_map(tl), shown, axis, np.arange(len(shown.ys), dtype=np.float64))


@dataclass(frozen=True)
class Shown:
    """What the plot shows of a run: per step its bar (height, kind, lanes), its markers'
    flags and its cost line's value; the cost line's legend words, the lanes' height and
    the y ceiling."""

    heights: np.ndarray
    kinds: np.ndarray
    depths: np.ndarray
    flags: np.ndarray
    ys: np.ndarray
    line: str
    lane: float
    top: float

    def __len__(self) -> int:
        return len(self.heights)

    @classmethod
    def of(cls, tl: Timeline) -> Shown:
        """All of it at once (the plot's first feed computes it a part per turn)."""
        kinds = copy(tl.kind, np.uint8)
        heights, lane, top = bar_heights(token_heights(tl), kinds)
        ys, _axis, line = cost_line(tl)
        depths = copy(tl.depth, np.uint16)
        return cls(heights, kinds, depths, marker_flags(tl), ys, line, lane, top)

    def grown_to(self, now: Shown) -> bool | None:
        """True: ``now`` is this and more steps after it, on the same scale (the plot can
        be appended to); False: the same steps (nothing to do); None: anything else
        changed (a step shown, the scale, a deeper lane, the cost line's kind)."""
        n = len(self)
        scale = (self.lane, self.top, self.line, int(self.depths.max(initial=0)))
        if len(now) < n or scale != (now.lane, now.top, now.line, int(now.depths.max(initial=0))):
            return None
        mine = (self.heights, self.kinds, self.depths, self.flags, self.ys)
        theirs = (now.heights, now.kinds, now.depths, now.flags, now.ys)
        if not all(np.array_equal(a, b[:n]) for a, b in zip(mine, theirs, strict=True)):
            return None
        return len(now) > n
