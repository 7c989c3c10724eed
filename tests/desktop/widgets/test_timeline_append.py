"""A live run's plot is appended to, not fed whole (issue 24): steps added after those
shown feed no item again while they are out of view, a step taller than any before stays
an append while it is under the plot's y ceiling, and the appended plot shows exactly
what a plot fed the whole run at once shows (bars, lanes, markers on their steps, the
cost line and the legend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from loom_core.formats.loader import load
from loom_core.views.timeline import F_ERROR, TimelineBuilder
from loom_desktop.widgets.timeline import TimelineWidget
from loom_desktop.widgets.timeline_data import ceiling
from tests.core.diff.tracegen import model, tool, write
from tests.desktop.widgets.bars_pixels import bar_colours, fed_whole_at_the_same_range

PAIRS = 700  # model calls, each followed by its tool's result


@pytest.fixture
def growing(tmp_path: Path) -> TimelineBuilder:
    """A run whose context grows (each call's input tokens one more than the last), its
    every seventh tool failing (an error marker) and a sub-agent's calls in between,
    indexed as a live tab indexes it: its first 900 effects so far."""
    effects = []
    for k in range(PAIRS):
        depth = 1 if k % 50 == 49 else 0
        effects.append(model("go", [(f"c{k}", "t", {})], 1000 + k, 10, depth=depth, n=k))
        result = f"ERROR: failed {k}" if k % 7 == 0 else f"ok {k}"
        effects.append(tool("t", result, f"c{k}", {}, depth=depth))
    builder = TimelineBuilder(load(write(tmp_path / "run.loom.json", effects)))
    builder.extend(900)
    return builder


def _plot(qtbot: Any) -> TimelineWidget:
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(900, 260)
    widget.show()
    return widget


def _calls(monkeypatch: pytest.MonkeyPatch, widget: TimelineWidget) -> list[str]:
    """Record every full feed of an item: the bars' data, the cost line, a marker kind."""
    calls: list[str] = []
    items = {"bars": (widget.bars, "set_data"), "cost": (widget.cost_curve, "setData")}
    items |= {"step axis": (widget.axis, "update")}  # its labels drawn again
    items |= {f"marker{bit}": (item, "setData") for bit, item in widget.markers.items()}
    for name, (item, method) in items.items():
        plain = getattr(item, method)
        monkeypatch.setattr(
            item, method, lambda *a, _n=name, _p=plain, **k: (calls.append(_n), _p(*a, **k))[1]
        )
    return calls


def _same(qtbot: Any, widget: TimelineWidget, builder: TimelineBuilder) -> None:
    """``widget`` shows what a new plot fed the run whole shows, in the same view."""
    whole = _plot(qtbot)
    whole.set_timeline(builder.tl)
    (x0, x1), _ = widget.getPlotItem().getViewBox().viewRange()
    whole.setXRange(x0, x1, padding=0)
    a, b = widget.bars, whole.bars
    assert np.array_equal(a.heights, b.heights)
    assert np.array_equal(a.kinds, b.kinds)
    assert np.array_equal(a.depths, b.depths)
    assert (a.lane, a.top) == (b.lane, b.top)
    assert a.dataBounds(1) == b.dataBounds(1)
    for bit, layer in widget._layers.items():
        assert np.array_equal(layer.steps, whole._layers[bit].steps)
        assert np.array_equal(layer.heights, whole._layers[bit].heights)
        shown = widget.markers[bit].getData()
        fresh = whole.markers[bit].getData()
        assert shown[0].tolist() == fresh[0].tolist() and shown[1].tolist() == fresh[1].tolist()
    assert widget.legend.entries == whole.legend.entries
    n = len(builder.tl)
    for plot in (widget, whole):  # the cost line's appended part joins once it is in view
        plot.setXRange(n - 300, max(x1, n), padding=0)
    assert widget.cost_curve.yData.tolist() == whole.cost_curve.yData.tolist()
    errors = np.flatnonzero(np.frombuffer(builder.tl.flags, np.uint8) & F_ERROR)
    assert widget._layers[F_ERROR].steps.tolist() == errors.tolist()  # on their steps


def test_steps_added_out_of_view_feed_nothing_again(
    qtbot: Any, growing: TimelineBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    widget = _plot(qtbot)
    widget.set_timeline(growing.tl)  # the first 400 steps in view
    calls = _calls(monkeypatch, widget)
    for upto in range(960, 1141, 60):  # taller steps every time, under the 1,585 ceiling
        growing.extend(upto)
        widget.set_timeline(growing.tl)
    assert calls == []  # nothing in view changed: no item fed, none redrawn
    assert len(widget.bars.heights) == len(growing.tl)
    _same(qtbot, widget, growing)  # the cost line's new part too, once it is in view
    assert "cost" in calls


def test_steps_added_in_view_are_appended_until_the_ceiling(
    qtbot: Any, growing: TimelineBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Following the tail: each refresh's steps are in view and taller than the last; the
    plot is fed whole only when they pass its y ceiling (here once: 1,585 tokens)."""
    widget = _plot(qtbot)
    widget.set_timeline(growing.tl)
    n = len(growing.tl)
    widget.setXRange(n - 200, n + 600, padding=0)  # room after the tail
    calls = _calls(monkeypatch, widget)
    tops, cost_tops = {widget.bars.top}, {widget._cost_top}
    for upto in range(930, 2 * PAIRS + 1, 30):
        growing.extend(upto)
        widget.set_timeline(growing.tl)
        tops.add(widget.bars.top)
        cost_tops.add(widget._cost_top)
        _same(qtbot, widget, growing)
    assert sorted(tops) == [ceiling(1459), ceiling(1709)] == [10**3.2, 10**3.3]
    assert calls.count("bars") == 1  # of 17 refreshes: the one that passed the ceiling
    assert len(cost_tops) <= 3  # the cost axis on its grid too, not rescaled every time


def test_the_same_steps_again_feed_nothing_while_the_whole_run_is_in_view(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short live run is shown whole (auto-range): its growth widens the view (a feed),
    but the follow's second ask with no new step draws nothing again."""
    effects = [model("go", [(f"c{k}", "t", {})], 100 + k, 10, n=k) for k in range(30)]
    builder = TimelineBuilder(load(write(tmp_path / "short.loom.json", effects)))
    builder.extend(10)
    widget = _plot(qtbot)
    widget.set_timeline(builder.tl)
    calls = _calls(monkeypatch, widget)
    widget.set_timeline(builder.tl)
    assert calls == []
    builder.extend(20)
    widget.set_timeline(builder.tl)
    assert "bars" in calls  # grown while shown whole: fed, and the view widened with it
    (x0, x1), _ = widget.getPlotItem().getViewBox().viewRange()
    assert x0 < 0 and x1 > 19
    _same(qtbot, widget, builder)


def test_a_live_run_followed_to_its_tail_shows_every_bar(qtbot: Any, tmp_path: Path) -> None:
    """A live tab appends each refresh's steps and moves the cursor to the last one, the
    view leaping along: the picture is the one a plot fed the whole run at once draws at
    the same range. The bars were cached by the view as drawn (only the steps then in
    view), and a pan moved that drawing: one bar of each refresh's ten was drawn."""
    effects = [tool("tick", f"t={k}", f"c{k}", {}) for k in range(700)]
    builder = TimelineBuilder(load(write(tmp_path / "ticks.loom.json", effects)))
    widget = _plot(qtbot)
    for upto in range(10, 701, 10):
        builder.extend(upto)
        widget.set_timeline(builder.tl)
        qtbot.wait(1)  # painted as the window would between refreshes
        widget.set_cursor(len(builder.tl) - 1)
        qtbot.wait(1)
    shown = bar_colours(widget)
    assert len(shown) > 300 and "#ffffff" not in shown  # a bar at every step in view
    assert shown == fed_whole_at_the_same_range(qtbot, widget, builder.tl)


def test_a_change_to_a_step_shown_feeds_the_whole_plot_again(
    qtbot: Any, growing: TimelineBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live run's shield decision lands on a step already shown: not an append."""
    widget = _plot(qtbot)
    widget.set_timeline(growing.tl)
    calls = _calls(monkeypatch, widget)
    growing.extend(1000)
    growing.tl.flags[3] |= F_ERROR
    widget.set_timeline(growing.tl)
    assert "bars" in calls
    _same(qtbot, widget, growing)


@pytest.mark.parametrize(
    ("tallest", "top"), [(0.0, 1.0), (1.0, 1.0), (1000.0, 1000.0), (1001.0, 10**3.1)]
)
def test_the_y_ceiling_is_on_a_26_percent_grid(tallest: float, top: float) -> None:
    assert ceiling(tallest) == pytest.approx(top)
    assert tallest <= ceiling(tallest) < max(tallest, 1.0) * 1.26


def test_a_feed_keeps_the_cost_axis_drawn(qtbot: Any, growing: TimelineBuilder) -> None:
    """The right axis draws the grid across the whole plot: a feed that leaves its words
    and its range as they were keeps that drawing (every feed dropped it)."""
    widget = _plot(qtbot)
    widget.set_timeline(growing.tl)
    right = widget.getPlotItem().getAxis("right")
    words = right.labelText
    widget.grab()  # drawn once
    assert right.picture is not None
    drawn = list(right.range)
    growing.extend(960)
    growing.tl.flags[3] |= F_ERROR  # a step shown changed: the whole plot is fed again
    widget.set_timeline(growing.tl)
    assert right.labelText == words and right.range == drawn  # as they were
    assert right.picture is not None  # not drawn again at the next paint
