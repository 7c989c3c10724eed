"""While the step list is filtered: the timeline draws the steps it hides faint, and the
context view says when the step it shows is one of them (nothing else would tell)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from loom_desktop.main_window import MainWindow


def settled(view) -> bool:
    return not view._filter_timer.isActive() and not view._filter_task.running


def test_a_filter_dims_the_timeline_and_names_a_hidden_current_step(
    qtbot, open_and_wait, window: MainWindow, sample: Path, tmp_path: Path
) -> None:
    view = open_and_wait(window, sample)
    tl = view.session.timeline
    model_step = next(s for s in range(len(tl)) if tl.kind_name(s) == "model")
    view.session.set_step(model_step)
    note = view.context_view.hidden_note
    assert note.isHidden() and view.timeline_widget.bars.matched is None
    view.filter_box.setText("tool:read_file")
    qtbot.waitUntil(lambda: view.model.rows is not None and settled(view), timeout=5000)
    reads = {s for s in range(len(tl)) if tl.kind_name(s) == "tool:read_file"}
    listed = set(view.model.rows)
    assert reads <= listed and model_step not in listed
    matched = view.timeline_widget.bars.matched  # bright: exactly the steps the list shows
    assert matched is not None and set(np.flatnonzero(matched).tolist()) == listed
    # the current step (a model call) is not in the list, but the context still shows it
    assert view.context_view.step == model_step or view.session.step == model_step
    assert note.isVisible() and "Hidden by the filter" in note.text()
    assert "“tool:read_file”" in note.text()
    window.grab().save(str(tmp_path / "filtered.png"))
    view.session.set_step(min(reads))  # a step the list shows: no note
    assert note.isHidden()
    view.filter_box.clear()
    qtbot.waitUntil(lambda: view.model.rows is None and settled(view), timeout=5000)
    assert view.timeline_widget.bars.matched is None and note.isHidden()
