"""A live tab shows the step it says it shows, at every turn of the event loop.

Why sampled from a zero-interval timer: a user sees the window between events, never
inside a slot. The checker runs between events while a journal grows line by line
with Follow tail on, and records every moment where the selected row, the context
view, the timeline cursor and the status bar's "i of M" disagree, or M is not the
number of rows the list shows.
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QTimer

from loom_desktop.main_window import MainWindow
from tests.core.live_helpers import effect, header, intent, model_result

_OF = re.compile(r"(\d+) of (\d+)")


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)
        fh.flush()


def _lines(steps: int) -> list[bytes]:
    """A run written one line at a time: model calls asking for a tool, tool results."""
    out = [header("go")]
    for seq in range(0, steps, 2):
        out += [
            intent(seq, "model"),
            effect(seq, "model", model_result(f"turn {seq}", ("tick",))),
            intent(seq + 1, "tool:tick"),
            effect(seq + 1, "tool:tick", f"tick {seq} ok"),
        ]
    return out


class _Checker:
    """Samples the tab between events; ``problems`` lists each disagreement seen."""

    def __init__(self, window: MainWindow, view) -> None:
        self.window, self.view = window, view
        self.problems: list[str] = []
        self.samples = 0
        self.timer = QTimer(interval=0)
        self.timer.timeout.connect(self.sample)
        self.timer.start()

    def sample(self) -> None:
        view = self.view
        rows = view.model.rowCount()
        if view.session.timeline is None or not rows:
            return
        self.samples += 1
        step = view.session.step
        current = view.table.selectionModel().currentIndex()
        seen = []
        if not current.isValid() or view.model.step_at(current.row()) != step:
            seen.append(f"list row {current.row()} is not step {step}")
        if view.context_view.step != step and not view._render_timer.isActive():
            seen.append(f"context shows {view.context_view.step}, step is {step}")
        if view._render_timer.isActive() and view._render_timer.interval() > 0:
            seen.append(f"context render of step {step} deferred")
        if view.timeline_widget is not None and round(view.timeline_widget.cursor.value()) != step:
            seen.append(f"cursor at {view.timeline_widget.cursor.value()}, step is {step}")
        match = _OF.search(self.window.status_labels["step"].text())
        if match is None or (int(match[1]), int(match[2])) != (step + 1, rows):
            seen.append(
                f"status {self.window.status_labels['step'].text()!r} with step "
                f"{step} and {rows} rows"
            )
        self.problems += seen

    def stop(self) -> None:
        self.timer.stop()


def test_following_a_journal_written_line_by_line_never_disagrees(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    lines = _lines(40)
    _append(path, lines[0])
    view = window.open_path(str(path))
    view.live.tailer.poll_interval = 0.02
    checker = _Checker(window, view)
    try:
        for line in lines[1:]:  # one line per few polls: rows, follows and renders interleave
            _append(path, line)
            view.live.tailer.hint()
            qtbot.wait(15)
        qtbot.waitUntil(
            lambda: view.model.rowCount() == 41 and view.session.step == 40, timeout=15_000
        )
        qtbot.wait(50)
    finally:
        checker.stop()
    assert view.live.following
    assert checker.samples > 50
    assert not checker.problems, sorted(set(re.sub(r"\d+", "N", p) for p in checker.problems))
