"""The filter box streams matches into the list and a new query replaces a running one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loom_core.formats.canonical import checksum, effect_key
from loom_core.views import step_index
from loom_core.views.filtering import filter_steps
from loom_desktop.document import filter_batches
from loom_desktop.main_window import MainWindow


def _trace(path: Path, n: int) -> Path:
    log = [
        {
            "seq": seq,
            "kind": "tool:bash",
            "key": effect_key("tool:bash", seq),
            "result": f"line {seq} " + ("needle" if seq % 3 == 0 else "hay") + " x" * 40,
            "depth": 0,
        }
        for seq in range(n)
    ]
    doc = {"version": 2, "model": "m", "prompt": "go", "output": "", "log": log}
    doc["checksum"] = checksum(doc)
    path.write_text(json.dumps(doc))
    return path


def test_matches_stream_in_and_a_new_query_cancels_the_old(
    qtbot, open_and_wait, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 40)  # many chunks…
    monkeypatch.setattr(filter_batches, "INTERVAL_S", 0.0)  # …each shown as it is found
    view = open_and_wait(window, _trace(tmp_path / "big.loom.json", 3000))
    tl = view.session.timeline
    inserts: list[tuple[int, int]] = []
    view.model.rowsInserted.connect(lambda _p, first, last: inserts.append((first, last)))
    batches: list[int] = []
    view._filter_task.partial.connect(lambda steps: batches.append(len(steps)))
    finished: list[object] = []
    view._filter_task.finished.connect(finished.append)
    view.filter_box.setText("needle")
    qtbot.waitUntil(lambda: bool(finished), timeout=10_000)
    expected = filter_steps(tl, "needle")
    assert expected is not None and list(view.model.rows or []) == list(expected)
    assert len(batches) > 5 and inserts  # shown chunk by chunk, as row inserts
    assert view.filter_note.text() == f"{len(expected):,} of {len(tl):,} rows shown"

    finished.clear()
    view.filter_box.setText("hay")
    view._run_filter()  # the first search of "hay" starts…
    view.filter_box.setText("line 29")
    view._run_filter()  # …and is replaced by this one before it can finish
    view._filter_timer.stop()  # the typing's debounce would run "line 29" a second time
    view._filter_timer.stop()  # (the typing's own debounced run is not part of this test)
    qtbot.waitUntil(lambda: bool(finished), timeout=10_000)
    qtbot.wait(50)  # anything the cancelled search still sent has arrived by now
    latest = filter_steps(tl, "line 29")
    assert latest is not None and list(view.model.rows or []) == list(latest)
    assert len(finished) == 1


def test_typing_builds_the_kind_name_column_before_the_filter_runs(
    qtbot, open_and_wait, window: MainWindow, tmp_path: Path
) -> None:
    view = open_and_wait(window, _trace(tmp_path / "t.loom.json", 500))
    tl = view.session.timeline
    assert step_index.step_index(tl).named_steps == 0
    view.filter_box.setText("t")  # the first keystroke of "tool:…"
    view._filter_timer.stop()  # the filter itself does not run
    qtbot.waitUntil(lambda: step_index.step_index(tl).named_steps == len(tl), timeout=10_000)
    assert view.model.rows is None  # nothing was filtered: only the column was built


def test_a_filter_that_runs_out_of_memory_keeps_the_run_open(
    qtbot, open_and_wait, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text filter over 5,000,000 steps ran out of memory building its text column; the
    window reported it as a failed open and closed the run's tab."""
    view = open_and_wait(window, _trace(tmp_path / "run.loom.json", 30))
    shown = view.model.rowCount()

    def exhausted(*_args: object) -> object:
        raise MemoryError

    monkeypatch.setattr("loom_desktop.document.view.filter_steps", exhausted)
    failed: list[object] = []
    view._filter_task.failed.connect(failed.append)
    view.filter_box.setText("needle")
    qtbot.waitUntil(lambda: bool(failed), timeout=10_000)
    assert window.tabs.count() == 1 and not window.failures
    assert view.filter_note.isVisibleTo(view) and view.filter_note.text() == (
        "The filter stopped: ran out of memory"
    )
    assert view.model.rowCount() == shown
