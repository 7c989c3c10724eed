"""The cumulative cost line starts on the bars' baseline. The token axis reaches below zero
(the sub-agent lanes are drawn there); the cost axis began at its bottom, so the line's $0
was drawn below the bars' zero, as if the run had started at a negative cost."""

from __future__ import annotations

from PySide6.QtCore import QPointF


def _scene_y(view, y: float) -> float:
    return view.mapViewToScene(QPointF(0.0, y)).y()


def test_zero_dollars_is_on_the_zero_token_line(qtbot, sample_plot) -> None:
    widget = sample_plot
    qtbot.wait(10)
    tokens = widget.getPlotItem().getViewBox()
    assert tokens.viewRange()[1][0] < 0  # the lanes' room below the baseline (the sample has one)
    assert abs(_scene_y(tokens, 0.0) - _scene_y(widget._cost_view, 0.0)) < 1.0
    top = float(widget.timeline.cum_cost[-1])
    assert _scene_y(widget._cost_view, top) >= _scene_y(tokens, tokens.viewRange()[1][1])
    right = widget.getPlotItem().getAxis("right")
    low, high = widget._cost_view.viewRange()[1]
    values = [low, low / 2, 0.0, high / 2]
    labels = right.tickStrings(values, 1.0, (high - low) / 4)
    assert labels[:2] == ["", ""] and labels[2] != ""  # never a negative dollar label


def test_the_cost_axis_writes_dollars_as_the_step_list_does(qtbot, sample_plot) -> None:
    """Not pyqtgraph's ``4e-05``: the right axis's ticks are money, written by format_usd."""
    right = sample_plot.getPlotItem().getAxis("right")
    assert right.tickStrings([0.0, 0.00002, 0.00004, 0.05], 1.0, 0.00002) == [
        "$0",
        "$0.00002",
        "$0.00004",
        "$0.0500",
    ]


def test_a_run_that_cost_nothing_has_only_a_zero_dollar_tick(qtbot, tmp_path) -> None:
    """An offline run ($0 at every step) kept the axis's $0..$1 room, labelled "$0.5000" and
    "$1": dollars the run never spent. Only its $0 is labelled."""
    from loom_core.formats.loader import load
    from loom_core.views.timeline import build_timeline
    from loom_desktop.widgets.timeline import TimelineWidget
    from tests.core.harness_runs import journal_complete

    path, _run = journal_complete(tmp_path)
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(900, 260)
    widget.show()
    widget.set_timeline(build_timeline(load(path)))
    assert widget.timeline is not None and widget.timeline.cost_known
    assert float(widget.timeline.cum_cost[-1]) == 0.0
    right = widget.getPlotItem().getAxis("right")
    assert right.tickStrings([0.0, 0.5, 1.0], 1.0, 0.5) == ["$0", "", ""]
