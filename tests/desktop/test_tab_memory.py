"""A long session does not leak: closing a tab gives its run's memory back.

Two causes are covered. The timeline's menu kept a callable holding the closed tab
(and so its whole run) alive; and loading froze the cyclic collector's view of the
whole process (``gc.freeze()``) and never undid it, so anything that became cyclic
garbage afterwards stayed for the life of the app. Measured in ways that do not
depend on the machine's load: the run's document is gone (a weak reference dies),
cyclic garbage made while a tab was open is collected once it closes, and Python's
allocations (``tracemalloc``) come back near the baseline.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent

from benchmarks.synth import write_synth
from loom_desktop.document.view import DocumentView
from loom_desktop.infra import gc_policy
from loom_desktop.infra.workers import wait_for_pool
from loom_desktop.main_window import MainWindow

TABS = 12
EFFECTS = 4000


class Node:
    """A reference cycle: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


def close_and_settle(qtbot, window: MainWindow, index: int) -> None:
    """Close tab ``index`` (the caller holds no reference to it), run its deferred delete,
    then the collection it schedules."""
    gone: list[bool] = []
    view = window.tabs.widget(index)
    assert isinstance(view, DocumentView)
    view.destroyed.connect(lambda *_: gone.append(True))  # holds nothing of the view
    window.close_tab(index)
    del view
    for _ in range(3):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QCoreApplication.processEvents()
    qtbot.waitUntil(lambda: bool(gone), timeout=5_000)
    # The tab's background work (the text index's build) is cancelled with it and lets go
    # of the run when it next checks, between two parts of a chunk: wait for it, bounded.
    assert wait_for_pool(10_000), "a closed tab's worker did not stop"
    qtbot.wait(50)  # the collection runs on a zero timer after the destroy
    gc.collect()


def open_close(qtbot, window: MainWindow, open_and_wait, path: Path) -> weakref.ref:
    view = open_and_wait(window, path)
    doc, index = weakref.ref(view.doc), window.tabs.indexOf(view)
    del view
    close_and_settle(qtbot, window, index)
    return doc


@pytest.mark.long
def test_closing_big_tabs_returns_memory(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    path = write_synth(tmp_path / "big.loom.json", EFFECTS)
    open_close(qtbot, window, open_and_wait, path)  # warm up: caches, fonts, lazy imports
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        one = 0
        for k in range(TABS):
            doc = open_close(qtbot, window, open_and_wait, path)
            assert doc() is None, f"tab {k}: the closed tab's run is still alive"
            if k == 0:
                one = tracemalloc.get_traced_memory()[1] - before  # what one open tab costs
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert one > 1_000_000  # a big tab really was open
    assert after - before < one // 10, (after - before, one)


def test_cyclic_garbage_is_collected_after_a_tab_closes(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    path = write_synth(tmp_path / "run.loom.json", 200)
    node = Node()
    cycle = weakref.ref(node)
    held = gc_policy.frozen_runs()
    view = open_and_wait(window, path)  # loading freezes what is alive, the cycle too
    assert gc.get_freeze_count() > 0
    del node  # now garbage, but only the cyclic collector can see it
    gc.collect()
    index = window.tabs.indexOf(view)
    del view
    close_and_settle(qtbot, window, index)
    assert cycle() is None, "cyclic garbage frozen by a load outlived the tab"
    if not held:
        assert gc.get_freeze_count() == 0  # no tab open: nothing stays frozen
