"""While the step list is filtered, the markers of the steps it hides are faint, as their
bars are: a full-colour error mark must stand for a step the filter shows.

Before, a filter that showed no step at all still drew every error mark at full colour
over the faint bars (seen on a Claude Code session under Xvfb: ``tool:Bash deploy``).
"""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np
from PySide6.QtGui import QColor

from loom_core.formats.loader import load
from loom_core.views.timeline import F_ERROR, Timeline, build_timeline
from loom_desktop.widgets.bars import FAINT_ALPHA
from loom_desktop.widgets.timeline import TimelineWidget
from tests.core.diff.tracegen import model, tool, write


def _errors_every_third_pair(tmp_path: Path, pairs: int) -> Path:
    effects = []
    for k in range(pairs):
        effects.append(model("go", [(f"c{k}", "t", {})], n=k))
        result = f"ERROR: failed {k}" if k % 3 == 0 else f"ok {k}"
        effects.append(tool("t", result, f"c{k}", {}))
    return write(tmp_path / "errors.loom.json", effects)


def _shown(item) -> list[int]:
    return sorted(item.getData()[0].astype(int).tolist())


def _plot_of_errors(qtbot, tmp_path: Path) -> tuple[TimelineWidget, Timeline]:
    """A shown plot of 30 model/tool pairs, every third tool call failed, all in view."""
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(900, 220)
    widget.show()
    tl = build_timeline(load(_errors_every_third_pair(tmp_path, 30)))
    widget.set_timeline(tl)
    widget.setXRange(-0.5, len(tl) - 0.5, padding=0)  # every step in view, one per column
    box = widget.getPlotItem().getViewBox()
    qtbot.waitUntil(lambda: box.width() > len(tl), timeout=10_000)  # laid out: no thinning
    return widget, tl


def test_the_markers_of_hidden_steps_are_faint_and_come_back_without_a_filter(
    qtbot, tmp_path: Path
) -> None:
    widget, tl = _plot_of_errors(qtbot, tmp_path)
    errors = [s for s in range(len(tl)) if tl.flags[s] & F_ERROR]
    assert len(errors) == 10
    assert _shown(widget.markers[F_ERROR]) == errors and not _shown(widget.faint_markers[F_ERROR])

    shown_rows = errors[::2] + [s for s in range(len(tl)) if not tl.flags[s] & F_ERROR][:5]
    widget.set_matches(array("i", sorted(shown_rows)))
    lit, faint = widget.markers[F_ERROR], widget.faint_markers[F_ERROR]
    assert _shown(lit) == errors[::2]  # full colour: the errors the list shows
    assert _shown(faint) == errors[1::2]  # the ones it hides, faint
    assert QColor(faint.opts["brush"].color()).alpha() == FAINT_ALPHA
    assert QColor(lit.opts["brush"].color()).alpha() == 255

    widget.set_matches(array("i"))  # a filter no step matches: no full-colour mark at all
    assert not _shown(lit) and _shown(faint) == errors

    widget.set_matches(None)
    assert _shown(lit) == errors and not _shown(faint)


def test_a_live_runs_new_markers_past_the_filtered_steps_are_shown_in_full(
    qtbot, tmp_path: Path
) -> None:
    """Steps the filter has not yet been asked about (a live run grew since) are drawn in
    full, markers as bars (``BarsItem.set_matched``)."""
    widget, tl = _plot_of_errors(qtbot, tmp_path)
    errors = np.flatnonzero(np.frombuffer(bytes(tl.flags), np.uint8) & F_ERROR).tolist()
    layer = widget._layers[F_ERROR]
    layer.set_matched(np.zeros(30, bool))  # the filter knew only the first 30 steps
    widget._show_markers()
    assert _shown(widget.markers[F_ERROR]) == [s for s in errors if s >= 30]
    assert _shown(widget.faint_markers[F_ERROR]) == [s for s in errors if s < 30]
