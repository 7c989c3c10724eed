"""The tab's plot is built, warmed and fed over several event-loop turns (issue 24: the
longest stall until the plot is shown), and shows the same as one built at once."""

from __future__ import annotations

import gc
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from loom_desktop.document.text_index_task import TextIndexer
from loom_desktop.document.view import DocumentView
from loom_desktop.infra import gc_policy
from loom_desktop.infra.background_import import BackgroundImport
from loom_desktop.widgets import timeline as timeline_module
from loom_desktop.widgets import timeline_data
from tests.desktop.plot_paints import plot_paints


def test_the_plot_is_built_across_event_loop_turns(
    qtbot: Any, sample: Path, monkeypatch: Any
) -> None:
    """Between the plot's first item and its placement in the tab, the event loop turns
    several times: a key or a repaint is served between the parts (built in one slot, a
    cold plot froze the window 40-170 ms at 100,000 effects)."""
    turns = [0]
    ticker = QTimer(interval=0)
    ticker.timeout.connect(lambda: turns.__setitem__(0, turns[0] + 1))
    made: list[int] = []
    plain = timeline_module.TimelineWidget.__init__

    def counted(widget: Any, *args: Any, **kwargs: Any) -> None:
        made.append(turns[0])
        plain(widget, *args, **kwargs)

    monkeypatch.setattr(timeline_module.TimelineWidget, "__init__", counted)
    view = DocumentView(str(sample))
    qtbot.addWidget(view)
    view.show()
    placed: list[int] = []
    view.timeline_built.connect(lambda: placed.append(turns[0]))
    ticker.start()
    view.start_loading()
    qtbot.waitUntil(lambda: view.timeline_widget is not None, timeout=20_000)
    ticker.stop()
    assert len(made) == 1 and placed
    assert placed[0] - made[0] >= 4  # built, its parts, warmed, fed: each a turn of its own
    widget = view.timeline_widget
    assert widget.timeline is view.session.timeline
    assert widget.cursor.value() == view.session.step


def test_a_staged_plot_shows_what_one_built_at_once_shows(qtbot: Any, sample: Path) -> None:
    staged = DocumentView(str(sample))
    qtbot.addWidget(staged)
    staged.show()
    staged.start_loading()
    qtbot.waitUntil(lambda: staged.timeline_widget is not None, timeout=20_000)
    at_once = DocumentView(str(sample))
    qtbot.addWidget(at_once)
    at_once.load_now()  # synchronous: ensure_timeline builds everything in this slot
    a, b = staged.timeline_widget, at_once.timeline_widget
    assert np.array_equal(a.bars.heights, b.bars.heights)
    assert np.array_equal(a.bars.kinds, b.bars.kinds)
    assert a.legend.entries == b.legend.entries
    assert a.cost_curve.getData()[1].tolist() == b.cost_curve.getData()[1].tolist()


def test_a_synchronous_call_finishes_a_staged_build(qtbot: Any, sample: Path) -> None:
    """A feature that needs the plot now (the doctor's flags) gets it, half built or not."""
    view = DocumentView(str(sample))
    qtbot.addWidget(view)
    view.session.set_timeline(build_timeline(load(sample)))  # rows; no plot asked for yet
    view.ensure_timeline(staged=True)
    assert view.timeline_widget is None  # under way, a part per turn
    view.ensure_timeline()
    assert view.timeline_widget is not None
    assert view.timeline_widget.timeline is view.session.timeline


def test_an_import_while_runs_are_held_is_frozen_too(qtbot: Any, tmp_path: Path) -> None:
    """The modules of a background import live as long as the process: with a run's
    objects frozen, they are frozen with them, not walked by the GUI's next collection."""
    (tmp_path / "plot_steps_probe_mod.py").write_text(
        textwrap.dedent(
            """
            def made_here():
                return 1
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    # earlier tests' tabs go now, with their thaw (a queued collection that freezes again)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.wait(20)
    owner = QObject()
    try:
        gc_policy.hold(owner)
        importer = BackgroundImport(("plot_steps_probe_mod",), qt_modules=())
        done: list[bool] = []

        class Waiter(QObject):
            def arrived(self) -> None:
                done.append(True)

        waiter = Waiter()
        importer.when_imported(waiter.arrived)
        qtbot.waitUntil(lambda: bool(done), timeout=20_000)
        module = sys.modules["plot_steps_probe_mod"]
        tracked = {id(o) for o in gc.get_objects()}  # the generations the collector walks
        assert id(module.made_here) not in tracked
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("plot_steps_probe_mod", None)
        owner.deleteLater()
        qtbot.waitUntil(lambda: gc_policy.frozen_runs() == 0, timeout=5_000)
        qtbot.wait(10)  # the thaw's queued collection


def test_the_text_index_starts_after_the_plots_first_paint(
    qtbot: Any, sample: Path, monkeypatch: Any
) -> None:
    """The index's worker takes the interpreter lock in long stretches: started as the plot
    was placed, it slowed the plot's first paint on the screen (issue 24's longest stall)."""
    painted = plot_paints(monkeypatch)
    seen: list[int] = []
    start = TextIndexer.start

    def recording_start(indexer: TextIndexer, tl: Any) -> None:
        seen.append(len(painted))
        start(indexer, tl)

    monkeypatch.setattr(TextIndexer, "start", recording_start)
    view = DocumentView(str(sample))
    qtbot.addWidget(view)
    view.show()
    view.start_loading()
    qtbot.waitUntil(lambda: bool(seen), timeout=20_000)
    assert seen[0] >= 1 and view.plot_is_shown


def test_the_plot_is_placed_with_its_axes_measured(qtbot: Any, sample: Path) -> None:
    """The axes' widths follow their tick texts, measured as they paint: a plot placed
    before it was painted fed widened them at its first paint on the screen, and was laid
    out and painted a second time in that turn (issue 24's longest stall)."""
    view = DocumentView(str(sample))
    qtbot.addWidget(view)
    view.show()
    widths: list[list[float]] = []

    def axes() -> list[float]:
        plot = view.timeline_widget.getPlotItem()
        return [plot.getAxis(side).width() for side in ("left", "right")]

    view.timeline_built.connect(lambda: widths.append(axes()))
    view.start_loading()
    qtbot.waitUntil(lambda: view.plot_is_shown, timeout=20_000)
    QCoreApplication.sendPostedEvents()  # any layout its first paint asked for
    assert widths == [axes()]


def test_a_loaded_runs_plot_arrays_are_computed_off_the_gui_thread(
    qtbot: Any, sample: Path, monkeypatch: Any
) -> None:
    """The bars' heights (and the step axis's mapping, the markers' flags, the cost line)
    are numpy passes over every step: 30-60 ms of GUI CPU each at 1,000,000 steps, the
    longest turns of the plot's build, when computed in it."""
    threads: list[int] = []
    plain = timeline_data.token_heights

    def recorded(tl: Any) -> Any:
        threads.append(threading.get_ident())
        return plain(tl)

    monkeypatch.setattr(timeline_data, "token_heights", recorded)
    monkeypatch.setattr(timeline_module, "token_heights", recorded)
    view = DocumentView(str(sample))
    qtbot.addWidget(view)
    view.show()
    view.start_loading()
    qtbot.waitUntil(lambda: view.timeline_widget is not None, timeout=20_000)
    assert threads and threading.get_ident() not in threads
    assert len(view.timeline_widget.bars.heights) == len(view.session.timeline)
