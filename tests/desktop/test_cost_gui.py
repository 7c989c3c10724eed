"""Cost in the window: one number per step everywhere, offline runs, the price file, the timeline.

The run has Anthropic cache writes and reads on its first model call; its cost
($0.0165, worked out from the genai-prices rates in ``tests/core/test_cost_views``)
must be the same in the step list, the status bar, the context header, the
timeline's tooltip and Compare.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from loom_core.diff import compare
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict
from loom_core.views import price_file, pricing
from loom_core.views.timeline import K_MODEL, build_timeline
from loom_desktop.document.step_list_model import COL_COST
from loom_desktop.features.compare.model import COL_D_COST, CompareModel, signed_cost
from loom_desktop.main_window import MainWindow
from loom_desktop.widgets.seq_axis import step_tip
from loom_desktop.widgets.timeline import EMPTY_SPAN, TimelineWidget
from tests.core.diff.tracegen import model, write
from tests.core.views.test_cost_views import ANTHROPIC_USAGE, harness_run


@pytest.fixture
def cached_run(tmp_path: Path) -> Path:
    return write(tmp_path / "cached.loom.json", harness_run())


def test_a_step_has_one_cost_everywhere(
    qtbot, open_and_wait, window: MainWindow, cached_run: Path, tmp_path: Path
) -> None:
    view = open_and_wait(window, cached_run)
    tl = view.session.timeline
    step = tl.step_of_effect[0]  # the call with cache writes and reads
    words = "$0.0165"
    assert tl.cost_text(step) == words
    assert view.model.index(step, COL_COST).data() == words
    view.session.set_step(step)
    window.update_status()
    cost_label = window.status_labels["cost"]
    assert cost_label.text().endswith(f"(step {words})")
    assert "genai-prices" in cost_label.toolTip()  # where the prices come from
    view.flush_render()
    assert words in view.context_view.browser.toPlainText().splitlines()[0]
    assert words in step_tip(tl, step)
    # Compare against the same run without the cache fields: the delta is the steps'
    plain = harness_run()
    plain[0]["result"]["usage"] = {"input_tokens": 1000, "output_tokens": 200}
    other = build_timeline(load(write(tmp_path / "plain.loom.json", plain)))
    m = CompareModel()
    m.set_diff(compare(load(cached_run), other.doc))
    row = next(r for r in range(m.rowCount()) if m.diff.rows[r].a == 0)
    assert m.index(row, COL_D_COST).data() == signed_cost(
        other.cost[other.step_of_effect[0]] - ANTHROPIC_USAGE[0][1]
    )


def test_an_offline_run_says_it_costs_nothing(
    qtbot, open_and_wait, window: MainWindow, tmp_path: Path
) -> None:
    path = write(tmp_path / "scripted.loom.json", harness_run(), model_id="scripted")
    view = open_and_wait(window, path)
    tl = view.session.timeline
    step = next(s for s in range(len(tl)) if tl.kind[s] == K_MODEL)
    assert view.model.index(step, COL_COST).data() == "$0 offline"
    view.session.set_step(step)
    window.update_status()
    assert window.status_labels["cost"].text() == "cost $0 / $0 offline"


def test_a_malformed_price_file_is_shown_in_a_dialog(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text('{"my-model": [1]}')
    monkeypatch.setenv(price_file.OVERRIDE_ENV, str(bad))
    price_file.load_overrides.cache_clear()
    pricing.rates_of.cache_clear()
    try:
        win = MainWindow()
        qtbot.addWidget(win)
        win.show()
        qtbot.waitUntil(lambda: bool(win.errors), timeout=5000)
        assert str(bad) in win.errors[0] and "must be [input, output]" in win.errors[0]
        boxes = [b for b in win.findChildren(QMessageBox) if b.isVisible()]
        assert boxes and str(bad) in boxes[0].text()
        assert "override file ignored" in pricing.provenance()
        win.close()
    finally:
        monkeypatch.delenv(price_file.OVERRIDE_ENV)
        price_file.load_overrides.cache_clear()
        pricing.rates_of.cache_clear()


def _axes(w: TimelineWidget):
    plot = w.getPlotItem()
    return plot.getAxis("left"), plot.getAxis("bottom"), plot.getAxis("right")


def test_timeline_legend_and_plain_usd_axis(qtbot, tmp_path: Path) -> None:
    from loom_core.demo.sample import write_sample

    write_sample(tmp_path / "s.loom.json")
    w = TimelineWidget()
    qtbot.addWidget(w)
    w.resize(900, 240)
    w.set_timeline(build_timeline(load(tmp_path / "s.loom.json")))
    w.show()
    qtbot.waitExposed(w)
    assert {"model", "tool", "prompt", "shield decision", "blocked call", "cumulative cost"} <= set(
        w.legend.entries
    )
    assert w.legend.legend.isVisible()
    left, _bottom, right = _axes(w)
    assert right.labelText == "cost" and right.labelUnits == ""  # the ticks say "$"
    for axis in (left, right):  # the sample costs cents: no "m$", no "x0.001"
        assert axis.autoSIPrefixScale == 1.0 and axis.labelUnitPrefix == ""
    # an unknown price: the line is tokens, and the legend says so
    w.set_timeline(
        build_timeline(load(write(tmp_path / "u.loom.json", [model("hi", [], 100, 10)], "my-llm")))
    )
    assert right.labelText == "tokens (no price)"
    assert "cumulative tokens (cost unknown)" in w.legend.entries


def test_empty_and_one_step_timelines_have_a_sane_range(qtbot, tmp_path: Path) -> None:
    w = TimelineWidget()
    qtbot.addWidget(w)
    w.resize(900, 240)
    w.show()
    empty = tmp_path / "e.loom.json"
    save_dict(
        {
            "version": 2,
            "model": "claude-sonnet-4-5",
            "system": "",
            "prompt": "",
            "episodes": [],
            "output": "",
            "truncated": False,
            "paused": False,
            "pending": None,
            "pending_depth": 0,
            "stop_reason": "",
            "log": [],
        },
        empty,
    )
    w.set_timeline(build_timeline(load(empty)))
    assert not len(w.timeline)
    (x0, x1), (y0, y1) = w.getPlotItem().getViewBox().viewRange()
    assert (x0, x1) == (-0.5, EMPTY_SPAN - 0.5) and y0 == 0.0 and y1 > 1
    left, bottom, right = _axes(w)
    for axis in (left, bottom, right):
        assert axis.autoSIPrefixScale == 1.0 and axis.labelUnitPrefix == ""
    assert not w.cursor.isVisible() and not w.legend.legend.isVisible()
    one = write(tmp_path / "one.loom.json", [model("hi", [], 100, 10)])
    tl = build_timeline(load(one))
    w.set_timeline(tl)
    (x0, x1), _ = w.getPlotItem().getViewBox().viewRange()
    assert x0 < -0.4 and x1 < len(tl) + 0.1  # the run, not a thousand empty steps
    row = tl.step_of_effect[0]
    ticks = [v for _s, values in bottom.tickValues(x0, x1, 900) for v in values]
    assert float(row) in ticks and bottom.tickStrings([float(row)], 1, 1) == ["0"]
    assert right.autoSIPrefixScale == 1.0  # $0.00045: no "µ$" either


def test_a_timeline_that_starts_empty_shows_its_bars_once_they_come(qtbot, tmp_path: Path) -> None:
    """A live run starts with no step; its first bars (and the markers above them) must
    not be cut at the empty timeline's fixed height."""
    w = TimelineWidget()
    qtbot.addWidget(w)
    w.resize(900, 240)
    w.show()
    empty = tmp_path / "e.loom.json"
    save_dict(
        {
            "version": 2,
            "model": "claude-sonnet-4-5",
            "system": "",
            "prompt": "",
            "episodes": [],
            "output": "",
            "truncated": False,
            "paused": False,
            "pending": None,
            "pending_depth": 0,
            "stop_reason": "",
            "log": [],
        },
        empty,
    )
    w.set_timeline(build_timeline(load(empty)))
    grown = write(tmp_path / "grown.loom.json", [model("hi", [], 5000, 700)])
    w.set_timeline(build_timeline(load(grown)))
    qtbot.waitUntil(lambda: w.getPlotItem().getViewBox().viewRange()[1][1] >= 5700, timeout=5_000)
