"""A tab closed right after its run arrives: what the tab scheduled for itself is dropped
with it. PySide ties ``QTimer.singleShot(ms, obj.method)`` to ``obj`` only when the method
is a plain method; the window fuzzer wraps ``ensure_timeline`` (as any decorator would),
and the deferred plot was then built on a splitter Qt had already deleted: a RuntimeError
escaping into Qt. The tab now names itself as the timer's context."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from loom_desktop.document.view import DocumentView


def test_a_tab_deleted_before_its_plot_is_built(qtbot: Any, sample: Path, monkeypatch: Any) -> None:
    plain = DocumentView.ensure_timeline
    monkeypatch.setattr(DocumentView, "ensure_timeline", lambda view, **kw: plain(view, **kw))
    view = DocumentView(str(sample))
    view.complete = True
    view._on_timeline(build_timeline(load(sample)))  # as when the run arrives
    assert view.timeline_widget is None  # the plot is 30 ms away
    tab = weakref.ref(view)
    view.deleteLater()  # as closing the tab does
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.wait(120)  # past the plot's timer: an exception there fails the test (pytest-qt)
    del view
    gc.collect()
    assert tab() is None  # and the pending call did not keep the deleted tab alive


def test_the_plot_is_built_after_the_step_list_has_painted(
    qtbot: Any, sample: Path, monkeypatch: Any
) -> None:
    """The plot (pyqtgraph's import and build: 0.3-0.6 s) waits for the step list's first
    paint with rows: a fixed 30 ms timer often fired first on a busy machine, and the user
    looked at an empty window meanwhile."""
    order: list[str] = []
    plain = DocumentView.ensure_timeline
    monkeypatch.setattr(
        DocumentView,
        "ensure_timeline",
        lambda view, **kw: (order.append("plot"), plain(view, **kw)),
    )
    view = DocumentView(str(sample))
    qtbot.addWidget(view)
    view.table.viewport().installEventFilter(_Painted(order, view))
    view.complete = True  # the whole run (a big run's head gets no plot: see below)
    view._on_timeline(build_timeline(load(sample)))
    qtbot.wait(60)  # longer than the old timer: nothing painted, no plot
    assert order == []
    view.show()
    qtbot.waitUntil(lambda: view.timeline_widget is not None, timeout=10_000)
    assert order[:2] == ["rows painted", "plot"]


def test_a_big_runs_head_gets_no_plot_until_the_whole_run_is_here(qtbot: Any, sample: Path) -> None:
    """The plot's import and build shared the interpreter lock with the loader while a big
    run loaded: 0.4-0.7 s freezes at 1,000,000 effects, for a plot of the head's first
    400 steps. The plot now comes with the whole run."""
    view = DocumentView(str(sample))
    qtbot.addWidget(view)
    view.show()
    timeline = build_timeline(load(sample))
    view._on_timeline(timeline)  # the head: complete is still False
    qtbot.wait(200)
    assert view.timeline_widget is None
    view.complete = True
    view._on_timeline(timeline)  # the whole run
    qtbot.waitUntil(lambda: view.timeline_widget is not None, timeout=10_000)


class _Painted(QObject):
    def __init__(self, order: list[str], view: DocumentView) -> None:
        super().__init__(view)
        self.order, self.view = order, view

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint and self.view.model.rowCount() and not self.order:
            self.order.append("rows painted")
        return False
