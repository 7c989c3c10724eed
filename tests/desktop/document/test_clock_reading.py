"""A ``time`` step (the agent's clock reading, seconds since the epoch) reads as a date in the
step list, the context view, ``summary``, ``steps`` and the exported page; the raw view keeps
the number as recorded."""

from __future__ import annotations

import json
from pathlib import Path

from loom_core.export.page_data import page_data
from loom_core.formats.loader import load
from loom_desktop.document.step_list_model import COL_SUMMARY
from loom_desktop.main_window import MainWindow
from tests.core.clis import core

WHEN = "2026-07-14 09:41:12.318 UTC"  # the sample's step 0: 1784022072.318604


def test_a_clock_reading_is_a_date_everywhere_but_the_raw_view(
    qtbot, window: MainWindow, sample: Path, open_and_wait
) -> None:
    view = open_and_wait(window, sample)
    row = 1  # the user prompt is row 0; step 0 is the clock reading
    assert view.session.timeline.kind_name(row) == "time"
    assert view.model.index(row, COL_SUMMARY).data() == WHEN
    view.session.set_step(row)
    view.render_now()
    assert WHEN in view.context_view.browser.toPlainText()
    assert json.loads(view.context_view.raw_text())["result"] == 1784022072.318604
    assert f"[   0] time             {WHEN}" in core("summary", sample).stdout
    assert f"[   0] time{' ' * 48}{WHEN}" in core("steps", sample).stdout
    data = page_data(load(sample))
    assert data["rows"][row][4] == WHEN
    assert data["details"][row]["result"] == f"{WHEN}\n(recorded as 1784022072.318604)"


def test_what_is_not_a_date_is_shown_as_it_is() -> None:
    from loom_core.views.steps import readable_time

    assert readable_time(0) == "1970-01-01 00:00:00.000 UTC"
    for value in (True, "noon", None, float("nan"), float("inf"), 1e300, -1e300, [1]):
        assert readable_time(value) is None
