"""Garbage is collected on the GUI thread only: never a Qt object freed on a worker."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from PySide6.QtCore import QObject

from loom_desktop.infra import gc_policy


class _Cycle:
    def __init__(self) -> None:
        self.me = self
        self.obj = QObject()


def test_the_app_turns_automatic_collection_off(qapp: Any) -> None:
    assert not gc.isenabled()  # LoomApplication did it (tests use the real application class)


def test_a_worker_threads_garbage_is_collected_by_the_gui_timer(qtbot: Any) -> None:
    freed_on: list[str] = []
    refs: list[weakref.ref[_Cycle]] = []

    def make() -> None:
        for _ in range(gc.get_threshold()[0] * 3):  # far past the threshold, on this thread
            cycle = _Cycle()
            refs.append(
                weakref.ref(cycle, lambda _r: freed_on.append(threading.current_thread().name))
            )
            del cycle

    worker = threading.Thread(target=make, name="worker")
    worker.start()
    worker.join(30)
    assert not freed_on  # allocating past the threshold collected nothing on the worker
    qtbot.waitUntil(lambda: all(r() is None for r in refs), timeout=10_000)
    assert set(freed_on) == {threading.main_thread().name}


def test_collect_due_follows_the_thresholds() -> None:
    gc.collect()
    assert gc_policy.collect_due() == -1
    junk = [[] for _ in range(gc.get_threshold()[0] + 10)]
    assert gc_policy.collect_due() >= 0
    del junk


def test_nothing_is_collected_while_a_bulk_load_runs_and_collection_resumes_after() -> None:
    """A collection during a big run's load scanned every object it had made so far, on
    the GUI thread: 50-360 ms freezes at 1,000,000 effects (issue 14)."""
    started, release = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def load() -> None:
        started.set()
        release.wait(30)
        raise ValueError("a broken file")  # a failed load ends the pause too

    def worker() -> None:
        try:
            gc_policy.loading(load)
        except ValueError as err:
            failures.append(err)

    gc.collect()
    thread = threading.Thread(target=worker, name="loader")
    thread.start()
    assert started.wait(30)
    junk = [[] for _ in range(gc.get_threshold()[0] + 10)]
    assert gc_policy.collect_due() == -1  # due, but a load runs
    release.set()
    thread.join(30)
    assert len(failures) == 1
    assert gc_policy.collect_due() >= 0
    del junk


def test_a_bulk_load_returns_its_result() -> None:
    assert gc_policy.loading(lambda: 42) == 42
