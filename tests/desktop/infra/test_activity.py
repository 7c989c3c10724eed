"""Background work in the window's process waits while the user moves through a run
(:mod:`loom_desktop.infra.activity`): the text index build pauses, then finishes."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from loom_core.views import step_index
from loom_desktop.infra import activity
from loom_desktop.infra.activity import USER, Activity
from loom_desktop.main_window import MainWindow
from tests.desktop.document.test_filter_stream import _trace


class Clock:
    """A clock that moves only when told: no test waits on real time passing."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _until(condition, bound: int = 2000) -> None:
    """Wait (bounded by count, each a short sleep) for a worker thread's condition."""
    done = threading.Event()
    for _ in range(bound):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("the condition never held")


def test_a_worker_waits_while_the_user_moves_and_goes_on_when_they_stop() -> None:
    clock = Clock()
    gate = Activity(clock)
    assert gate.wait_quiet(lambda: False) is False  # nobody moved: no wait
    gate.touch()
    answers: list[bool] = []
    worker = threading.Thread(target=lambda: answers.append(gate.wait_quiet(lambda: False)))
    worker.start()
    _until(lambda: gate.waits == 1)
    assert worker.is_alive() and not answers
    clock.now += activity.QUIET_S  # the user has been still long enough
    worker.join(timeout=10)
    assert answers == [False]


def test_a_cancel_ends_the_wait() -> None:
    clock = Clock()
    gate = Activity(clock)
    gate.touch()
    stop = threading.Event()
    answers: list[bool] = []
    worker = threading.Thread(target=lambda: answers.append(gate.wait_quiet(stop.is_set)))
    worker.start()
    _until(lambda: gate.waits == 1)
    stop.set()
    worker.join(timeout=10)
    assert answers == [True]


def test_the_text_index_is_built_only_once_the_user_stops_moving(
    qtbot, window: MainWindow, tmp_path: Path, library_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(USER, "clock", clock)
    monkeypatch.setattr(USER, "waits", 0)
    view = window.open_path(str(_trace(tmp_path / "t.loom.json", 800)))
    qtbot.waitUntil(lambda: view.complete and view.session.count > 10, timeout=20_000)
    qtbot.waitUntil(lambda: view.timeline_widget is not None, timeout=20_000)
    qtbot.waitUntil(lambda: USER.waits >= 1, timeout=20_000)
    tl = view.session.timeline
    assert step_index.step_index(tl).text_index is None  # paused for the user
    clock.now += activity.QUIET_S
    qtbot.waitUntil(lambda: step_index.step_index(tl).text_index is not None, timeout=20_000)
    monkeypatch.setattr(USER, "last", -float("inf"))
    view.session.set_step(7)  # the user moves: every tab's move is seen
    assert USER.last == clock.now


def test_scrolling_the_list_or_panning_the_plot_counts_as_moving(
    qtbot, open_and_wait, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(USER, "clock", clock)
    view = open_and_wait(window, _trace(tmp_path / "t.loom.json", 800))
    monkeypatch.setattr(USER, "last", -float("inf"))
    bar = view.table.verticalScrollBar()
    bar.setValue(bar.maximum())  # the user scrolls the list: the step does not move
    assert view.session.step == 0 and USER.last == clock.now
    monkeypatch.setattr(USER, "last", -float("inf"))
    plot = view.timeline_widget.viewport()
    at = QPointF(plot.rect().center())
    wheel = QWheelEvent(
        at,
        QPointF(plot.mapToGlobal(at)),
        QPoint(),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(plot, wheel)  # the user zooms the plot
    assert USER.last == clock.now
