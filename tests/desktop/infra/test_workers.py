"""A Task whose owner is deleted while it runs drops its result quietly; a task reporting
progress very often reaches the window a few times, the last report always."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject

from loom_desktop.infra.workers import Task, TaskContext, wait_for_pool


def test_result_of_a_deleted_owner_is_dropped(qtbot, capfd) -> None:
    owner = QObject()
    task = Task(owner)
    release, started = threading.Event(), threading.Event()

    def work(_ctx: object) -> str:
        started.set()
        release.wait(10)
        return "late"

    task.start(work)
    assert started.wait(10)
    owner.deleteLater()  # a tab or dialog closed while its worker still runs
    qtbot.waitUntil(lambda: not _alive(task), timeout=5_000)
    release.set()
    assert wait_for_pool(10_000)
    assert "Signal source has been deleted" not in capfd.readouterr().err


def _alive(obj: QObject) -> bool:
    try:
        obj.objectName()
    except RuntimeError:
        return False
    return True


def test_progress_reaches_the_window_a_few_times_and_always_at_the_end(qtbot) -> None:
    owner = QObject()
    task = Task(owner)
    seen: list[tuple[int, int]] = []
    task.progressed.connect(lambda done, total: seen.append((done, total)))

    def work(ctx: TaskContext) -> str:
        for done in range(1, 2001):  # a thousand reports a millisecond apart or faster
            ctx.progress(done, 2000)
        return "done"

    with qtbot.waitSignal(task.finished, timeout=10_000):
        task.start(work)
    qtbot.waitUntil(lambda: bool(seen) and seen[-1] == (2000, 2000), timeout=5_000)
    assert seen[0] == (1, 2000)  # the first report at once
    assert len(seen) < 100  # not one event-loop turn per report
