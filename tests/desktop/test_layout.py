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
    view = open_and_wait(window, sample)
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
