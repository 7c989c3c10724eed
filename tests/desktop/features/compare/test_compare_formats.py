"""Run ▸ Compare… across formats: a Claude Code run and an OpenTelemetry run of the same task
(tests/core/diff/same_task.py) pair step for step and diverge where they differ; any two
formats open in the window compare without an error."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

from loom_core.diff import IDENTICAL, INPUTS, RESULTS
from loom_desktop.features.compare.view import CompareView
from loom_desktop.main_window import MainWindow
from loom_desktop.resources import sample_trace
from tests.core.diff.same_task import claude_run, otel_run
from tests.desktop.features.compare.test_compare import compare_paths, wait_ready
from tests.desktop.foreign_files import finished, make


def test_run_compare_on_claude_code_and_otel_of_one_task(
    qtbot: Any, window: MainWindow, open_and_wait: Any, tmp_path: Path
) -> None:
    otel, _ = otel_run(tmp_path)
    claude = finished(claude_run(tmp_path, hotel="Widder"))
    va, vb = open_and_wait(window, claude), open_and_wait(window, finished(otel))
    window.tabs.setCurrentWidget(va)
    dialog = window.compare_dialog()
    assert dialog.choice() == (va, vb)
    dialog.accept()
    view = dialog.result_view
    assert isinstance(view, CompareView)
    wait_ready(qtbot, view)
    assert view.diff is not None
    assert [(r.a, r.b, r.status) for r in view.diff.rows] == [
        (0, 0, IDENTICAL),
        (1, 1, IDENTICAL),
        (2, 2, IDENTICAL),
        (3, 3, RESULTS),
        (4, 4, INPUTS),
        (5, 5, RESULTS),
    ]
    header = view.header_label.text()
    assert "Identical prefix: <b>3</b>" in header and "A step 3 ⟷ B step 3" in header
    assert "compared by what each step did" in header
    assert view.current_row() == 3 and view.shown_row == 3
    assert view.detail is not None  # the booking asked for: no id or usage noise
    assert [(c.old, c.new) for c in view.detail.args_diff] == [("Widder", "Storchen")]
    assert view.detail.result_diff == []
    shot = os.environ.get("LOOM_FORMAT_SHOTS")
    if shot:
        assert window.grab().save(str(Path(shot) / "compare-claude-otel.png"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("formats")
    made = {f: make(f, folder / f).path for f in ("otlp-json", "claude-code", "inspect")}
    return {**made, "loom": sample_trace()}


@pytest.mark.parametrize(
    ("a", "b"), list(itertools.combinations(("otlp-json", "claude-code", "inspect", "loom"), 2))
)
def test_any_two_formats_compare(
    qtbot: Any, window: MainWindow, runs: dict[str, Path], a: str, b: str
) -> None:
    view = compare_paths(qtbot, window, runs[a], runs[b])
    diff = view.diff
    assert diff is not None and diff.by_substance  # one side is foreign
    assert {r.a for r in diff.rows} - {None} == set(range(len(diff.a.effects)))
    assert {r.b for r in diff.rows} - {None} == set(range(len(diff.b.effects)))
    view.select_row(len(diff.rows) - 1)  # a pair's details come up too
    qtbot.waitUntil(lambda: view.shown_row == len(diff.rows) - 1, timeout=10_000)
    assert not window.errors
