"""The timeline: one bar per step, a draggable cursor, markers and a cost line.

Plot items are created once and fed new data (re-creating pyqtgraph items
leaks). Bars and sub-agent depth lanes are one :class:`BarsItem` that paints only
what is visible, so 100,000 steps draw as cheaply as 1,000; errors, blocked
calls and shield decisions are markers above their bar.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from typing import Any

import numpy as np

# np.unique (the bars', the markers') imports numpy.ma lazily: 18-28 ms inside the plot's
# first paint, where a live tab's first rows waited for it; here it is part of the plot's
# import (before any row, or off the GUI thread: background_import)
import numpy.ma  # noqa: F401
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath
from PySide6.QtWidgets import QGraphicsItem, QWidget

from loom_core.views.palette import MARKS
from loom_core.views.pricing import format_usd
from loom_core.views.timeline import (
    F_BLOCKED,
    F_DENIED,
    F_ERROR,
    F_SHIELD,
    KIND_NAMES,
    Timeline,
)
from loom_desktop.style import (
    BLOCKED_COLOR,
    DEPTH_COLORS,
    ERROR_COLOR,
    KIND_COLORS,
    SHIELD_COLOR,
    severity_color,
)
from loom_desktop.widgets.bars import EMPTY_TOP, FAINT_ALPHA, BarsItem
from loom_desktop.widgets.markers import MarkerLayer
from loom_desktop.widgets.seq_axis import SeqAxis, step_tip
from loom_desktop.widgets.timeline_data import (
    LIFT,
    Prepared,
    Shown,
    bar_heights,
    ceiling,
    copy,
    cost_line,
    marker_flags,
    token_heights,
)
from loom_desktop.widgets.timeline_legend import TimelineLegend

BAR_ALPHA = 200
INITIAL_SPAN = 400  # steps visible at first on a long run
LEGEND_MARGIN = 24  # pixels of the plot's width (beside its axes) the legend leaves free
_MARKS = (
    (F_ERROR, "x", ERROR_COLOR),
    (F_BLOCKED, "t", BLOCKED_COLOR),
    (F_DENIED, "d", ERROR_COLOR),
    (F_SHIELD, "star", SHIELD_COLOR),
)
_MARK_WORDS = {bit: words for bit, words, _glyph, _color in MARKS}  # as the page says them
COST_PEN = ("#ef6c00", 2)  # the cumulative cost line (and its legend sample)
EMPTY_SPAN = 10  # steps an empty timeline spans (a live run's first steps fill it)


def _measure_axes(plot: pg.PlotItem) -> None:
    """Each axis to be drawn anew measures its tick texts at the new ranges now, as
    pyqtgraph does while painting it: a width that changes then (an empty live run's
    "100" becoming its first steps' "5") lays the plot out again after that paint and
    paints it a second time. The drawing itself is left to the paint."""
    image = QImage(1, 1, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        for side in ("left", "bottom", "right"):
            axis = plot.getAxis(side)
            if axis.isVisible() and axis.picture is None:
                axis.generateDrawSpecs(painter)
    finally:
        painter.end()


def _flag() -> QPainterPath:
    """A little flag (the doctor's mark, as in the context view's ⚑); +y is down on screen."""
    path = QPainterPath()
    path.addRect(-0.32, -0.5, 0.1, 1.0)  # the pole
    path.moveTo(-0.22, -0.5)
    path.lineTo(0.45, -0.27)
    path.lineTo(-0.22, -0.04)
    path.closeSubpath()
    return path


class _Cursor(pg.InfiniteLine):
    """The step cursor. It never changes the plot's range (it is added with
    ``ignoreBounds``), so a move must not tell the view its bounds changed: pyqtgraph
    would then re-run the y auto-range over every item and repaint the whole plot on
    every step, which made a step move cost as much as the run is long."""

    def informViewBoundsChanged(self) -> None:  # noqa: N802 - pyqtgraph API
        return


class TimelineWidget(pg.PlotWidget):
    """Bars by kind, height by tokens; emits ``step_requested`` when the user moves the cursor."""

    step_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None, staged: bool = False) -> None:
        """``staged``: build only the plot itself here; :meth:`build_steps` adds the rest,
        a part per step (the tab runs one per event-loop turn: built at once, a cold
        plot froze the window 40-170 ms)."""
        self.axis = SeqAxis()  # x is the row; the labels are step numbers (seqs)
        super().__init__(parent, background="w", axisItems={"bottom": self.axis})
        self.setMinimumHeight(150)
        self.timeline: Timeline | None = None
        self._tip_row: int | None = None
        self._auto_range = True
        self._setting_range = False
        self._cost_top = 1.0  # the right axis's top (see _align_cost_zero)
        self._cost_free = False  # a run that cost nothing: only the $0 tick is true
        self._cost_label: str | None = None  # the right axis's words (see _label_cost_axis)
        self._shown: Shown | None = None  # what the plot shows (a live run is appended to)
        self._line_steps = 0  # the steps on the cost line (appended ones join once in view)
        plot = self.getPlotItem()
        plot.getViewBox().sigRangeChangedManually.connect(self._user_ranged)
        plot.setMouseEnabled(x=True, y=False)
        plot.hideButtons()
        plot.showGrid(x=False, y=True, alpha=0.15)
        plot.setLabel("bottom", "step")
        plot.setLabel("left", "tokens")
        plot.getAxis("left").enableAutoSIPrefix(False)  # token counts are never "x1e+06"
        # The hidden top axis follows x too: with its SI prefix on, every pan set its
        # label's HTML again and re-measured it (about 0.1 ms of each far jump's pan).
        plot.getAxis("top").enableAutoSIPrefix(False)
        plot.getViewBox().setAutoVisible(y=True)
        self.bars = BarsItem(
            [self._fill(KIND_COLORS[name]) for name in KIND_NAMES],
            [QColor(c) for c in DEPTH_COLORS],
        )
        plot.addItem(self.bars)
        self._rest = self._build_rest(plot)
        if not staged:
            self.finish_build()

    def build_steps(self) -> Iterator[None]:
        """The rest of a ``staged`` build, yielding between its parts."""
        yield from self._rest

    def finish_build(self) -> None:
        """Whatever of the build is left, now."""
        for _ in self._rest:
            pass

    def _build_rest(self, plot: pg.PlotItem) -> Iterator[None]:
        self.markers = {bit: self._marker(plot, symbol, color) for bit, symbol, color in _MARKS}
        # the markers of the steps the filter hides, faint as their bars (see .markers)
        self.faint_markers = {
            bit: self._marker(plot, symbol, color, FAINT_ALPHA) for bit, symbol, color in _MARKS
        }
        self._layers = {
            bit: MarkerLayer(item, self.faint_markers[bit]) for bit, item in self.markers.items()
        }
        plot.getViewBox().sigXRangeChanged.connect(lambda *_: self._show_markers())
        plot.getViewBox().sigResized.connect(lambda *_: self._show_markers())
        self.held = self._marker(plot, "o", BLOCKED_COLOR)  # where a held call's step will go
        self.findings = pg.ScatterPlotItem(size=15, pxMode=True, symbol=_flag())  # doctor's
        plot.addItem(self.findings)
        yield
        self.cursor = _Cursor(
            0,
            angle=90,
            movable=True,
            pen=pg.mkPen("#111", width=2),
            hoverPen=pg.mkPen("#e53935", width=3),
        )
        plot.addItem(self.cursor, ignoreBounds=True)  # moving it must not re-run auto-range
        self.cursor.sigPositionChanged.connect(self._cursor_moved)
        self.scene().sigMouseClicked.connect(self._clicked)
        self.scene().sigMouseMoved.connect(self._hovered)
        self._cost_view, self.cost_curve = self._cost_axis(plot)
        yield
        self.legend = TimelineLegend(
            plot,
            KIND_COLORS,
            [(bit, sym, color, _MARK_WORDS[bit]) for bit, sym, color in _MARKS],
            pg.mkPen(COST_PEN[0], width=COST_PEN[1]),
        )
        for side in ("left", "right"):
            plot.getAxis(side).geometryChanged.connect(self._fit_legend)
        # Cache everything static as pixmaps: moving the cursor then repaints only itself.
        for item in (
            *(plot.getAxis(a) for a in ("left", "bottom", "right")),
            *self.markers.values(),
            *self.faint_markers.values(),
            self.cost_curve.curve,
        ):
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    # -- construction ---------------------------------------------------------------
    @staticmethod
    def _marker(plot: pg.PlotItem, symbol: str, color: str, alpha: int = 255) -> pg.ScatterPlotItem:
        """One scatter item per marker kind: uniform symbol and brush keep setData vectorised."""
        shade = QColor(color)
        shade.setAlpha(alpha)
        item = pg.ScatterPlotItem(
            size=11, pxMode=True, symbol=symbol, brush=pg.mkBrush(shade), pen=pg.mkPen(shade)
        )
        plot.addItem(item)
        return item

    @staticmethod
    def _fill(color: str) -> QColor:
        fill = QColor(color)
        fill.setAlpha(BAR_ALPHA)
        return fill

    def _cost_axis(self, plot: pg.PlotItem) -> tuple[pg.ViewBox, pg.PlotDataItem]:
        """A second y axis on the right for the cumulative cost (or tokens) line."""
        view = pg.ViewBox()
        plot.showAxis("right")
        right = plot.getAxis("right")
        right.enableAutoSIPrefix(False)  # dollars, never "m$"
        right.tickStrings = lambda values, scale, spacing: [  # below $0 is the lanes' room
            self._cost_tick(v) for v in values
        ]
        plot.scene().addItem(view)
        plot.getAxis("right").linkToView(view)
        view.setXLink(plot)
        view.setMouseEnabled(x=False, y=False)
        view.setZValue(10)  # above the bars, so the line is not tinted by them
        view.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        curve = pg.PlotDataItem(pen=pg.mkPen(COST_PEN[0], width=COST_PEN[1]))
        curve.setClipToView(True)
        curve.setDownsampling(auto=True, method="peak")
        view.addItem(curve)
        plot.getViewBox().sigResized.connect(
            lambda: view.setGeometry(plot.getViewBox().sceneBoundingRect())
        )
        plot.getViewBox().sigYRangeChanged.connect(lambda *_: self._align_cost_zero())
        return view, curve

    def _cost_tick(self, value: float) -> str:
        """A tick of the right axis: money as everywhere (not ``4e-05``), or tokens when the
        line is cumulative tokens (an unpriced run); nothing below zero (the lanes' room)."""
        if value < 0:
            return ""
        if self.timeline is not None and not self.timeline.cost_known:
            return f"{value:,.0f}"
        if value > 0 and self._cost_free:  # a free run's axis says $0, not "$0.5000" above it
            return ""
        return format_usd(float(value)) or "$0"

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        """The legend reflows to the new width (before the plot lays out again)."""
        self._fit_legend(None if event is None else event.size().width())  # None: pyqtgraph
        super().resizeEvent(event)

    def _fit_legend(self, width: int | None = None) -> None:
        """The legend in the plot's width beside its axes. Called on a resize and whenever
        an axis changes width (its tick texts are measured when it is first painted)."""
        legend = self.__dict__.get("legend")  # None while __init__ builds the plot
        plot = self.getPlotItem()  # None once the widget is being torn down
        if legend is None or plot is None:
            return
        axes = plot.getAxis("left").width() + plot.getAxis("right").width()
        legend.fit((self.width() if width is None else width) - axes - LEGEND_MARGIN)

    # -- data -----------------------------------------------------------------------
    def set_timeline(self, tl: Timeline) -> None:
        """Feed every plot item from the timeline's arrays (no item is created); a live
        run that only grew is appended to (:meth:`_append`), not redrawn, and the same
        steps again are not fed at all, even while the whole run is in view: a live tab
        refreshes the plot and then, following the tail, asks again with nothing new,
        and a second feed redrew the whole plot again (a full repaint is 15-20 ms: the
        longest waits of a live run's rows are the plot's repaints, issue 24)."""
        if self._shown is not None and len(tl) >= len(self._shown):
            now = Shown.of(tl)
            grown = self._shown.grown_to(now)
            if grown is False and tl is self.timeline:
                return
            if grown is not None and not self._auto_range:  # (a re-read's same steps too)
                self._append(tl, now)
                self._settle()
                return
        for _ in self.feed_steps(tl):
            pass
        self._settle()

    def _settle(self) -> None:
        """Lay the plot out and work its views' auto-ranges out now, not during the next
        paint. Qt lays a changed layout out in a later turn (the legend's entries appear
        with a run's first steps) and pyqtgraph updates an auto-range as the scene
        prepares a paint; either change then asked for a second paint at once, so a
        refresh drew the whole plot twice, a live run's first one three times (15-20 ms
        each: what a live run's rows waited for, issue 24)."""
        plot = self.getPlotItem()
        plot.getViewBox().prepareForPaint()
        self._cost_view.prepareForPaint()
        _measure_axes(plot)
        plot.layout.activate()

    def _append(self, tl: Timeline, now: Shown) -> None:
        """Show the steps a live run added after those shown, repainting only what changes
        on screen: nothing when they are out of view (the cursor has not reached them), the
        new bars' place when they are in it. A full redraw took up to 57 ms once a second
        during a fast live run (issue 24)."""
        self.timeline, self._shown = tl, now
        self.axis.set_timeline(tl, self.getPlotItem().getViewBox().viewRange()[0][1])
        self._tip_row = None
        self.bars.extend(now.heights, now.kinds, now.depths)
        for bit, layer in self._layers.items():
            steps = np.flatnonzero(now.flags & bit)
            layer.set_points(steps, now.heights[steps] + now.top * LIFT, grown=True)
        self._show_markers()  # and the cost line, when its new part is in view
        self.legend.update(tl, now.line)

    def feed_steps(self, tl: Timeline, ready: Prepared | None = None) -> Iterator[None]:
        """:meth:`set_timeline`, yielding between the bars, the cost line and the range
        (a big run's first feed is a few tens of ms: the tab spreads it over turns).
        ``ready``: the arrays computed ahead in a worker (see :func:`prepare`), used when
        they are ``tl``'s."""
        ours = ready if ready is not None and ready.tl is tl else None
        done = None if ours is None else ours.shown
        self.timeline, self._shown = tl, None
        n = len(tl)
        self.axis.set_timeline(tl, mapped=None if ours is None else ours.seq)
        self._tip_row = None  # the tooltip is read again
        yield  # each part below is tens of ms at 1,000,000 steps
        if done is None:
            height = token_heights(tl)
            yield
            kinds = copy(tl.kind, np.uint8)
            height, lane, top = bar_heights(height, kinds)
            yield
            depths = copy(tl.depth, np.uint16)
        else:
            height, kinds, depths, lane, top = (
                done.heights,
                done.kinds,
                done.depths,
                done.lane,
                done.top,
            )
        self.bars.set_data(height, kinds, depths, lane, top)
        yield
        flags = self._set_markers(tl, height, top, None if done is None else done.flags)
        yield
        ys, line = yield from self._cost_steps(tl, ours)
        self._shown = Shown(height, kinds, depths, flags, ys, line, lane, top)
        yield
        self.cursor.setVisible(n > 0)
        if self._auto_range and not n:  # an empty run: a few steps' room, no odd scale
            self.setXRange(-0.5, EMPTY_SPAN - 0.5, padding=0)
            self.setYRange(0, EMPTY_TOP, padding=0)
        elif self._auto_range:
            # Until the user zooms or pans, show the whole run (the first INITIAL_SPAN
            # steps of a long one); a live run's growth widens the view with it. The
            # empty run's fixed height above turned the y auto-range off: a live run that
            # started empty kept it, so its bars and markers grew out of the top.
            self.enableAutoRange(axis=pg.ViewBox.YAxis)
            self._setting_range = True
            self.setXRange(-0.5, min(n, INITIAL_SPAN) - 0.5, padding=0.01)
            self._setting_range = False
            self._auto_range = n < INITIAL_SPAN

    def set_matches(self, rows: Any) -> None:
        """The steps the step list's filter shows (None: no filter): the others are faint."""
        matched = None
        if rows is not None and self.timeline is not None:
            matched = np.zeros(len(self.timeline), bool)
            picked = np.frombuffer(rows, np.int32) if len(rows) else np.zeros(0, np.int64)
            matched[picked[picked < len(matched)]] = True
        self.bars.set_matched(matched)
        for layer in self._layers.values():
            layer.set_matched(matched)
        self._show_markers()

    def _set_markers(
        self, tl: Timeline, height: np.ndarray, top: float, flags: np.ndarray | None = None
    ) -> np.ndarray:
        """Each marker kind's steps, ``LIFT`` of the y scale above their bars; the flags
        (``flags``: :func:`marker_flags` of ``tl``, computed ahead)."""
        flags = marker_flags(tl) if flags is None else flags
        for bit, layer in self._layers.items():
            steps = np.flatnonzero(flags & bit)
            layer.set_points(steps, height[steps] + top * LIFT)
        self._show_markers()
        return flags

    def _show_markers(self) -> None:
        """Feed each marker kind what is in view (see :mod:`.markers`), and the cost line
        its steps appended out of view once they come into it."""
        box = self.getPlotItem().getViewBox()
        (x0, x1), _ = box.viewRange()
        shown = self._shown
        if shown is not None and self._line_steps < len(shown) and x1 >= self._line_steps - 0.5:
            self._set_cost_line(shown.ys)  # a live run's steps appended out of view, now in it
        columns = int(box.width()) or 1
        for layer in self._layers.values():
            layer.show(x0, x1, columns)

    def _cost_steps(
        self, tl: Timeline, ready: Prepared | None = None
    ) -> Generator[None, None, tuple[np.ndarray, str]]:
        """The cost line and its axis, a turn each; returns (its values, legend words).
        ``ready``: ``tl``'s, computed ahead."""
        if ready is None:
            ys, axis, line = cost_line(tl)
            xs = None
        else:
            ys, axis, line, xs = ready.shown.ys, ready.cost_axis, ready.shown.line, ready.xs
        yield
        self._label_cost_axis(axis)
        self._set_cost_line(ys, xs)
        yield
        self.legend.update(tl, line)
        return ys, line

    def _label_cost_axis(self, words: str) -> None:
        """Name the right axis, only when its words change: pyqtgraph measures an axis again
        on every ``setLabel`` and drops its drawing, which holds the grid across the whole
        plot. Set on each feed, a live tab's refresh drew it again once a second (10-40 ms
        while the rows of a fast tail waited)."""
        if words != self._cost_label:
            self._cost_label = words
            self.getPlotItem().setLabel("right", words)

    def _set_cost_line(self, ys: np.ndarray, xs: np.ndarray | None = None) -> None:
        """``xs``: the line's steps, made ahead (8 MB at 1,000,000 steps)."""
        self._line_steps = len(ys)
        self.cost_curve.setData(np.arange(len(ys), dtype=np.float64) if xs is None else xs, ys)
        top = float(ys.max(initial=0.0))
        # on the grid, as the bars' scale: a live run's growing cost rescaled the right axis
        # (a repaint of it) on every refresh; a free or empty run: $0..$1
        self._cost_top = ceiling(top * 1.05, 0.0) if top > 0 else 1.0
        self._cost_free = top <= 0
        self._align_cost_zero()

    def _align_cost_zero(self) -> None:
        """The right axis's zero on the left axis's zero line. The left axis reaches below
        zero (the sub-agent lanes are drawn there); a right axis starting at its bottom
        drew $0 below the bars' baseline, as if the run had started at a negative cost."""
        low, high = self.getPlotItem().getViewBox().viewRange()[1]
        below = min(max(-low / (high - low), 0.0), 0.9) if high > low else 0.0
        top = self._cost_top
        self._cost_view.setYRange(-top * below / (1.0 - below), top, padding=0)

    def set_held(self, position: int | None) -> None:
        """Flag (or clear) a call held for approval at the step it will become."""
        if position is None:
            self.held.setData(x=[], y=[])
        else:
            self.held.setData(x=[float(position)], y=[0.0])

    def set_findings(self, marks: Sequence[tuple[int, str]]) -> None:
        """Mark doctor findings: a flag above each ``(step, severity)``'s bar, coloured by
        severity. One scatter item for all of them (shared brushes), fed with setData."""
        heights = self.bars.heights
        marks = [(s, sev) for s, sev in marks if 0 <= s < len(heights)]
        if not marks:
            self.findings.setData(x=[], y=[])
            return
        lift = self.bars.top * LIFT
        steps = np.array([s for s, _ in marks], dtype=np.int64)
        colors = [severity_color(sev) for _, sev in marks]
        brushes = {c: pg.mkBrush(c) for c in set(colors)}
        pens = {c: pg.mkPen(QColor(c).darker(140)) for c in set(colors)}
        self.findings.setData(
            x=steps.astype(np.float64),
            y=heights[steps] + 3 * lift,
            brush=[brushes[c] for c in colors],
            pen=[pens[c] for c in colors],
        )

    def _user_ranged(self, *_args: object) -> None:
        self._auto_range = False

    # -- cursor -----------------------------------------------------------------------
    def set_cursor(self, step: int) -> None:
        """Move the cursor without echoing a request, panning to keep it in view.

        A pan redraws the whole plot, so it leaps: the cursor lands a tenth of the
        view from the edge it was heading for, and the next nine tenths of steps in
        that direction need no pan. While the whole run is shown (auto-range) a live
        run's next refresh widens the view instead.
        """
        self.cursor.blockSignals(True)
        self.cursor.setValue(step)
        self.cursor.blockSignals(False)
        if self._auto_range:
            return
        (x0, x1), _ = self.getPlotItem().getViewBox().viewRange()
        width = x1 - x0
        if x0 <= step <= x1:
            return
        start = step - (0.1 if step > x1 else 0.9) * width
        self.setXRange(*self._within_run(start, width, step), padding=0)

    def _within_run(self, start: float, width: float, step: int) -> tuple[float, float]:
        """The view ``[start, start + width]`` slid back inside the run (and the cursor's
        step): a leap toward the run's first or last step stops at it, instead of showing
        empty space beyond it with the cursor at the far edge and no step labels."""
        n = len(self.timeline) if self.timeline is not None else 0
        lo, hi = min(-0.5, step - 0.5), max(n - 0.5, step + 0.5)
        start = max(lo, min(start, hi - width))
        return start, start + width

    def _cursor_moved(self) -> None:
        step = int(round(self.cursor.value()))
        self.step_requested.emit(step)

    def _clicked(self, event: Any) -> None:  # a pyqtgraph MouseClickEvent
        if event.button() != Qt.MouseButton.LeftButton or self.timeline is None:
            return
        pos = self.getPlotItem().getViewBox().mapSceneToView(event.scenePos())
        self.step_requested.emit(int(round(pos.x())))

    def row_at(self, scene_pos: Any) -> int | None:
        """The step-list row under a scene position (None: outside the run)."""
        if self.timeline is None:
            return None
        row = int(round(self.getPlotItem().getViewBox().mapSceneToView(scene_pos).x()))
        return row if 0 <= row < len(self.timeline) else None

    def _hovered(self, scene_pos: Any) -> None:
        row = self.row_at(scene_pos)
        if row != self._tip_row:  # a payload is decoded once per row, not per mouse move
            self._tip_row = row
            self.setToolTip(
                "" if row is None or self.timeline is None else step_tip(self.timeline, row)
            )
