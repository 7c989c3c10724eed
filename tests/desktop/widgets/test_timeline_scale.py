"""The timeline at scale: moving the cursor costs the same whatever the run's length.

pyqtgraph re-runs a view's auto-range (a pass over every item's bounds) and repaints
the whole plot whenever an item tells the view its bounds changed. The cursor is
added with ``ignoreBounds``, so it must never do that; and the bars' bounds are
measured once per data change, not once per repaint.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFont, QFontMetricsF

from loom_core.formats.loader import load
from loom_core.views.timeline import F_ERROR, Timeline, build_timeline
from loom_desktop.widgets.timeline import TimelineWidget
from tests.core.diff.tracegen import model, tool, write


def test_moving_the_cursor_does_not_rerun_the_auto_range(qtbot, sample_plot) -> None:
    widget = sample_plot
    box = widget.getPlotItem().getViewBox()
    told: list[object] = []
    original = box.itemBoundsChanged
    box.itemBoundsChanged = lambda item: (told.append(item), original(item))[1]
    for step in range(1, 8):
        widget.set_cursor(step)
        qtbot.wait(1)
    assert widget.cursor not in told  # else every move re-ranges and repaints the plot


def test_bar_bounds_are_measured_once_per_data_change(qtbot, sample: Path) -> None:
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.set_timeline(build_timeline(load(sample)))
    bars = widget.bars
    before = bars.boundingRect()
    bars.heights[:] = 0  # a change behind set_data's back is not looked at again
    assert bars.boundingRect() == before
    bars.set_data(bars.heights, bars.kinds, bars.depths, bars.lane)
    assert bars.boundingRect() != before


def _many_errors(tmp_path: Path, n: int) -> Path:
    """A run of ``n`` model/tool pairs whose every tool call failed."""
    effects = []
    for k in range(n):
        effects.append(model("go", [(f"c{k}", "t", {})], n=k))
        effects.append(tool("t", f"ERROR: failed {k}", f"c{k}", {}))
    return write(tmp_path / "errors.loom.json", effects)


def _shown_plot(qtbot, tmp_path: Path, pairs: int) -> tuple[TimelineWidget, Timeline]:
    """A shown 700x200 plot of :func:`_many_errors`' run of ``pairs`` pairs."""
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(700, 200)
    widget.show()
    tl = build_timeline(load(_many_errors(tmp_path, pairs)))
    widget.set_timeline(tl)
    return widget, tl


def test_markers_show_what_is_in_view_one_per_pixel_column(qtbot, tmp_path: Path) -> None:
    """Zoomed out, a marker kind is thinned to one per pixel column; zoomed in, every
    marker of the range is there, and none outside it (pyqtgraph pays per point)."""
    widget, tl = _shown_plot(qtbot, tmp_path, 2000)
    errors = [s for s in range(len(tl)) if tl.flags[s] & F_ERROR]
    widget.setXRange(0, len(tl), padding=0)
    qtbot.wait(10)
    columns = int(widget.getPlotItem().getViewBox().width())
    shown = widget.markers[F_ERROR].getData()[0]
    assert 0 < len(shown) <= columns < len(errors)
    widget.setXRange(1000, 1100, padding=0)
    qtbot.wait(10)
    shown = sorted(widget.markers[F_ERROR].getData()[0].astype(int))
    assert shown == [s for s in errors if 1000 <= s <= 1101]


def test_the_step_axis_takes_seqs_from_the_timeline_not_the_effects(sample: Path) -> None:
    """Reading a million effects' seqs on the GUI thread stalled it for most of a
    second; the builder reads them in the worker (``Timeline.seqs``)."""
    from loom_desktop.widgets.seq_axis import SeqAxis

    tl = build_timeline(load(sample))
    expected = [e.seq for e in tl.doc.effects]

    class NoEffects:
        @property
        def effects(self) -> object:
            raise AssertionError("the axis walked the effects")

    tl.doc = NoEffects()  # type: ignore[assignment]
    axis = SeqAxis()
    axis.set_timeline(tl)
    rows = list(tl.step_of_effect)
    assert [int(axis.row_seq[r]) for r in rows] == expected


def test_axis_ticks_bisect_the_rows_in_view(sample: Path) -> None:
    """Ticks are asked for on every axis repaint: the rows in view are found by bisection,
    with the same ticks a scan over every row gives."""
    from loom_desktop.widgets.seq_axis import SeqAxis

    axis = SeqAxis()
    axis.set_timeline(build_timeline(load(sample)))
    assert isinstance(axis._in_view(3, 20), slice)
    bisected = axis.tickValues(3, 20, 600)
    axis._ascending = False  # the mask path (a file whose seqs go back)
    assert axis.tickValues(3, 20, 600) == bisected and bisected


def test_past_the_runs_end_the_step_labels_do_not_overlap(qtbot, sample: Path) -> None:
    """After End the run's last steps take a tenth of the view: their labels were picked
    for the whole width, one per step a few pixels apart, drawn over each other."""
    from loom_desktop.widgets.seq_axis import SeqAxis

    axis = SeqAxis()
    axis.set_timeline(build_timeline(load(sample)))
    n, size = len(axis.row_seq), 1000.0
    whole = axis.tickValues(-0.5, n - 0.5, size)  # the run fills the view: as pyqtgraph picks
    assert [spacing for spacing, _ in whole] == [5.0, 1.0]
    lo, hi = n - 6.0, n - 6.0 + 10 * n  # the last few steps, then empty room
    px_per_row = size / (hi - lo)
    label_px = QFontMetricsF(QFont()).horizontalAdvance(str(n))  # one label, no gap
    levels = axis.tickValues(lo, hi, size)
    assert levels
    for _spacing, rows in levels:
        gaps = [b - a for a, b in zip(rows, rows[1:], strict=False)]
        assert all(gap * px_per_row >= label_px for gap in gaps), (levels, px_per_row)
    shown = [row for _spacing, rows in levels for row in rows]
    assert all(lo <= row <= n - 1 for row in shown)


def test_the_rows_in_view_are_found_without_copying_the_runs_rows(qtbot, sample: Path) -> None:
    """A pan repaints the step axis, which finds the rows in view: bisecting the run's
    int64 rows with a fractional view bound made numpy copy every row as a float first
    (8 MB and 2 ms per repaint at 1,000,000 steps)."""
    import tracemalloc

    import numpy as np

    from loom_desktop.widgets.seq_axis import SeqAxis

    axis = SeqAxis()
    axis.set_timeline(build_timeline(load(sample)))
    n = 1_000_000
    axis._rows = np.arange(n, dtype=np.int64)  # a long run's rows (ascending)
    tracemalloc.start()
    try:
        shown = axis._in_view(499_999.5, 500_399.5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert shown == slice(500_000, 500_400)  # whole rows inside the bounds
    assert peak < n  # bytes: far less than a copy of the rows
    assert axis._in_view(-0.5, 2.0) == slice(0, 3)
    assert axis._in_view(float("-inf"), float("inf")) == slice(0, n)
    axis._ascending = False  # the mask path picks the same rows
    assert np.flatnonzero(axis._in_view(499_999.5, 500_399.5)).tolist() == list(
        range(500_000, 500_400)
    )


def _view(widget: TimelineWidget) -> tuple[float, float]:
    (x0, x1), _ = widget.getPlotItem().getViewBox().viewRange()
    return x0, x1


def test_leaps_to_the_ends_stop_at_the_run(qtbot, tmp_path: Path) -> None:
    """End then Home used to pan a view's width past the run's start: empty space before
    step 0, the cursor at the right edge, no step labels (seen in a real window)."""
    widget, tl = _shown_plot(qtbot, tmp_path, 600)
    n = len(tl)
    x0, x1 = _view(widget)
    width = x1 - x0
    assert width < n  # the run is longer than the view: a move past it pans
    widget.set_cursor(n - 1)  # End
    x0, x1 = _view(widget)
    assert x0 <= n - 1 <= x1 and x1 <= n - 0.5 + 1e-6, (x0, x1)
    assert abs((x1 - x0) - width) < 1e-6  # a pan, not a zoom
    widget.set_cursor(0)  # Home
    x0, x1 = _view(widget)
    assert x0 >= -0.5 - 1e-6 and x0 <= 0 <= x1, (x0, x1)
    widget.set_cursor(n // 2)  # a leap into the middle keeps the tenth-of-a-view lead
    x0, x1 = _view(widget)
    assert abs(x0 - (n // 2 - 0.1 * width)) < 1e-6, (x0, x1)


def test_a_pan_does_not_relabel_the_hidden_top_axis(qtbot, sample_plot) -> None:
    top = sample_plot.getPlotItem().getAxis("top")
    assert not top.isVisible()
    labelled: list[str] = []
    original = top.label.setHtml
    top.label.setHtml = lambda html: (labelled.append(html), original(html))[1]
    for start in (0.5, 2.5, 4.5):
        sample_plot.setXRange(start, start + 3, padding=0)
        qtbot.wait(1)
    assert labelled == []  # pyqtgraph's SI prefix set it on every pan: HTML laid out for nothing


def test_step_labels_name_each_rows_seq_and_nothing_else(sample: Path) -> None:
    """The labels are looked up for a whole level at once: a prompt row and a row outside
    the run still get no number, every other row its step's seq."""
    from loom_desktop.widgets.seq_axis import SeqAxis

    tl = build_timeline(load(sample))
    axis = SeqAxis()
    axis.set_timeline(tl)
    seq_of = {row: e.seq for row, e in zip(tl.step_of_effect, tl.doc.effects, strict=True)}
    rows = list(range(-2, len(tl) + 2))
    assert len(seq_of) < len(tl)  # the sample has prompt rows
    expected = [str(seq_of[r]) if r in seq_of else "" for r in rows]
    assert axis.tickStrings([float(r) for r in rows], 1.0, 1.0) == expected
    assert axis.tickStrings([r + 0.2 for r in rows], 1.0, 1.0) == expected  # the nearest row
    assert axis.tickStrings([], 1.0, 1.0) == []
