"""A Task whose owner is deleted while it runs drops its result quietly."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject

from loom_desktop.infra.workers import Task, wait_for_pool


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
