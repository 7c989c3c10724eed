"""Panels take room from the context view, not from the window or the step list; at
1000×700 the step list's tokens and cost columns and the status bar's tokens and cost
are all on screen, also with a larger UI font."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QWidget

from loom_desktop.document.step_list_model import COL_COST, COL_TOKENS
from loom_desktop.features.proxy.demo_panel import DemoOutputDock
from loom_desktop.features.proxy.info_dock import ProxyInfoDock
from loom_desktop.main_window import MainWindow
from tests.core.proxy.test_control_client import _free_port


def _inside(widget: QWidget, window: MainWindow) -> bool:
    """The whole widget lies inside the window, and is as wide as its text needs."""
    top_left = widget.mapTo(window, widget.rect().topLeft())
    return (
        window.rect().contains(QRect(top_left, widget.size()))
        and widget.width() >= widget.sizeHint().width()
    )


@pytest.fixture
def big_font(qapp) -> Iterator[None]:
    """An 11 pt UI font, as many desktops use (the offscreen default is 9 pt)."""
    old = QApplication.font()
    font = QApplication.font()
    font.setPointSizeF(11)
    QApplication.setFont(font)
    yield
    QApplication.setFont(old)


@pytest.mark.parametrize("size", [(1000, 700), (800, 600)])
def test_panels_neither_grow_the_window_nor_squeeze_the_step_list(
    qtbot, open_and_wait, window: MainWindow, sample: Path, size: tuple[int, int]
) -> None:
    window.resize(*size)
    window.library.dock.show()  # the Runs dock open, as a user has it
    view = open_and_wait(window, sample)
    demo = DemoOutputDock(window)  # what Help ▸ Run offline demo adds at the bottom
    demo.place(window)
    demo.show_state("demo: the agent is running — approve or deny its deploy in the panel")
    panel = window.attach_proxy(_free_port())  # its long "no proxy answering" error, too
    second = window.attach_proxy(_free_port())  # a second proxy's queue: the same panel
    qtbot.waitUntil(lambda: "no proxy answering" in panel.status.text(), timeout=10_000)
    info = {
        "host": "127.0.0.1",
        "port": 1,
        "url": "http://127.0.0.1:1",
        "target": "https://api.anthropic.com",
        "save": "/somewhere/session.loom.json",
    }
    proxy_dock = ProxyInfoDock(info, "anthropic", window)  # what Proxy ▸ Start adds at the bottom
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, proxy_dock)
    window.doctor.toggleViewAction().trigger()  # View ▸ Doctor, beside the proxy's panel
    qtbot.wait(50)
    try:
        assert (window.width(), window.height()) == size
        assert window.minimumSizeHint().width() <= size[0]  # nothing asks the window to grow
        assert proxy_dock in window.tabifiedDockWidgets(window.doctor)  # tabs, not side by side
        assert not window.doctor.visibleRegion().isEmpty()  # the panel just shown is in front
        assert second is panel and len(panel.connections) == 2
        step_list = view.lower_split.widget(0)
        char = view.fontMetrics().averageCharWidth()
        assert step_list.width() >= max(step_list.minimumWidth(), 30 * char)  # not "c…"
        assert view.context_view.width() >= view.context_view.minimumWidth() > 0
        if size == (1000, 700):  # tokens and cost are on screen without scrolling
            table = view.table
            for col in (COL_TOKENS, COL_COST):
                right = table.columnViewportPosition(col) + table.columnWidth(col)
                assert 0 <= table.columnViewportPosition(col) and right <= table.viewport().width()
    finally:
        for connection in window.proxies:
            connection.stop()


def test_status_bar_tokens_and_cost_fit_at_1000x700(
    qtbot, big_font, open_and_wait, window: MainWindow, sample: Path
) -> None:
    window.resize(1000, 700)
    view = open_and_wait(window, sample)
    qtbot.waitUntil(lambda: view.checksum == "valid", timeout=20_000)
    view.checksum = "mismatch"  # the longest texts the bar shows
    view.complete = False
    view.session.set_step(view.session.count - 1)  # a priced model step: the longest cost text
    window.update_status()
    qtbot.wait(50)
    assert (window.width(), window.height()) == (1000, 700)
    labels = window.status_labels
    for key in ("step", "tokens", "cost"):
        assert _inside(labels[key], window), (key, labels[key].text())
    assert "MISMATCH" in labels["checksum"].text() and "modified" in labels["checksum"].toolTip()


def test_held_call_message_fits_beside_the_status_figures(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    window.resize(1000, 700)
    view = open_and_wait(window, sample)
    qtbot.waitUntil(lambda: view.checksum == "valid", timeout=20_000)
    view.checksum = "mismatch"
    view.session.set_step(view.session.count - 1)
    window.update_status()
    panel = window.attach_proxy(_free_port())
    try:
        panel.held.emit(2)
        qtbot.wait(50)
        bar = window.statusBar()
        message = bar.currentMessage()
        assert "2 calls held" in message
        room = min(label.x() for label in window.status_labels.values() if label.isVisible())
        assert bar.fontMetrics().horizontalAdvance(message) + 12 <= room
    finally:
        for connection in window.proxies:
            connection.stop()


def _runs_dock_open(window: MainWindow) -> None:
    window.library.dock.show()


def test_the_timeline_is_whole_at_1000x700_with_the_runs_dock_open(
    qtbot, open_and_wait, window: MainWindow, sample: Path, tmp_path: Path
) -> None:
    """The legend was one row, wider than the plot: the plot grew past its widget and its
    right side (the cost axis, the last bars) was cut off. It wraps into rows instead."""
    window.resize(1000, 700)
    _runs_dock_open(window)
    view = open_and_wait(window, sample)
    qtbot.wait(50)
    widget = view.timeline_widget
    plot = widget.getPlotItem()
    assert (window.width(), window.height()) == (1000, 700)
    assert plot.width() <= widget.width() + 0.5, (plot.width(), widget.width())
    right = plot.getAxis("right")
    assert right.mapRectToScene(right.boundingRect()).right() <= widget.width() + 0.5
    assert len(widget.legend.legend.items) >= 8  # the sample's kinds, markers and line
    assert widget.legend.legend.columnCount < len(widget.legend.legend.items)  # wrapped
    window.grab().save(str(tmp_path / "timeline_1000.png"))
    window.resize(1400, 900)  # and one row again where there is room
    qtbot.wait(50)
    assert widget.legend.legend.columnCount == len(widget.legend.legend.items)
    assert plot.width() <= widget.width() + 0.5


def test_three_panels_leave_the_runs_dock_readable(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    """Runs on the left, Doctor at the bottom, a proxy's approvals on the right: the Runs
    dock was crushed to "Whe…"; it keeps room for its When and Run columns."""
    window.resize(1000, 700)
    _runs_dock_open(window)
    open_and_wait(window, sample)
    panel = window.attach_proxy(_free_port())
    window.doctor.toggleViewAction().trigger()
    qtbot.wait(50)
    try:
        assert (window.width(), window.height()) == (1000, 700)
        # one side column: the approvals are a tab beside Runs, in front when calls are held
        assert window.library.dock in window.tabifiedDockWidgets(panel)
        panel.held.emit(1)
        qtbot.wait(50)
        assert not panel.visibleRegion().isEmpty()
        window.library.dock.raise_()
        qtbot.wait(50)
        page = window.library.dock_page
        table = page.table
        header = table.horizontalHeader()
        need = header.sectionSize(0) + header.sectionSize(1)  # When and Run, whole
        assert table.viewport().width() >= need, (table.viewport().width(), need)
    finally:
        for connection in window.proxies:
            connection.stop()


def test_a_passing_message_stops_short_of_the_run_figures(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    """A long message (a fork's 'done — /a/long/path') ran up to "step 11 · 13 of 13",
    cut mid-word, as if it overwrote the figures: it is shortened in the middle, said
    whole in the tooltip, and a gap keeps it apart from the first field."""
    window.resize(1000, 700)
    view = open_and_wait(window, sample)
    window.update_status()
    qtbot.wait(50)
    long = "Branch of sample.loom.json at step 10: done — " + "/very/long/folder" * 12 + "/b.json"
    window.show_status(long, 10_000)
    bar = window.statusBar()
    assert bar.currentMessage() == long
    window.update_status()  # the figures change after the message: it fits again
    qtbot.wait(50)
    label = bar.message
    shown = label.shown_text()
    assert shown != long and "…" in shown and shown.endswith("b.json")
    first_field = min(w.x() for w in window.status_labels.values() if w.isVisible())
    text_end = (
        label.x() + label.contentsRect().left() + label.fontMetrics().horizontalAdvance(shown)
    )
    assert text_end + 12 <= first_field, (text_end, first_field)
    label.grab()  # paint: the tooltip says it whole
    assert label.toolTip() == long
    window.show_status("short", 1000)  # a message that fits is as it is
    assert label.shown_text() == "short"
    assert view is window.current()


def test_a_branch_and_a_comparison_do_not_widen_the_window(
    qtbot, open_and_wait, window: MainWindow, tmp_path: Path
) -> None:
    """A branch's bar ("saved in ~/.local/share/…" and its buttons) and Compare's header
    lines were wider than the room beside the Runs dock: the window grew by itself to
    1,154 px, or, where it could not, squeezed the Runs dock."""
    from tests.desktop.features.fork.test_branch_views import redacting_branch

    deep = tmp_path / "runs of the textkit project, kept for the weekly review" / "slugify"
    deep.mkdir(parents=True)  # a long folder: the bar says where the branch is saved
    parent, branch = redacting_branch(deep)
    window.resize(1000, 700)
    window.library.dock.show()
    view = open_and_wait(window, parent)
    forked = open_and_wait(window, branch)
    compare = window.open_compare(view, forked)
    qtbot.waitUntil(lambda: compare is not None and compare.state == "ready", timeout=20_000)
    plain = view.minimumSizeHint().width()
    for tab in (forked, compare):
        window.tabs.setCurrentWidget(tab)
        qtbot.wait(50)
        assert (window.width(), window.height()) == (1000, 700)
        assert tab.minimumSizeHint().width() <= plain, type(tab).__name__
        assert window.minimumSizeHint().width() <= 1000, type(tab).__name__


def test_the_status_fields_are_placed_without_a_qt_warning(qtbot, qtlog) -> None:
    """The OTLP listener puts its field first among the permanent ones (index 0). The bar's
    passing message is a widget of the bar too, so Qt found 0 out of range, appended the
    field and wrote a warning on stderr at every start (a --screenshot of a bad file then
    printed two lines, not one)."""
    window = MainWindow()
    qtbot.addWidget(window)
    assert not [r.message for r in qtlog.records if "StatusBar" in r.message]
    window.close()


def test_the_doctor_opens_at_a_quarter_of_the_window(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    """View ▸ Doctor took 344 of the window's 820 px for the sample's two findings and left
    the step list eight rows: it opens at a quarter of the height, its findings in view."""
    window.resize(1280, 820)
    view = open_and_wait(window, sample)
    step_list = view.lower_split.widget(0)
    window.doctor.toggleViewAction().trigger()
    qtbot.waitUntil(lambda: window.doctor.model.rowCount() == 2, timeout=20_000)
    qtbot.waitUntil(lambda: window.doctor.height() <= 820 // 4 + 10, timeout=5_000)
    table = window.doctor.table
    assert table.viewport().height() >= 2 * table.rowHeight(0)  # both findings shown
    assert step_list.height() >= 12 * view.table.rowHeight(0)
