"""Every way of opening a file ends in a tab: drop, Open Recent, the app's open signal."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QFileOpenEvent

from loom_desktop.app import LoomApplication
from loom_desktop.main_window import MainWindow


def test_drop_opens_each_file_as_a_tab(
    qtbot, window: MainWindow, sample: Path, tmp_path: Path
) -> None:
    other = tmp_path / "copy.loom.json"
    shutil.copy(sample, other)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(sample)), QUrl.fromLocalFile(str(other))])
    event = QDropEvent(
        QPointF(100, 100),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    assert window.tabs.count() == 2
    assert [window.tabs.tabText(i) for i in range(2)] == ["sample.loom.json", "copy.loom.json"]
    qtbot.waitUntil(lambda: all(v.complete for v in window.documents()), timeout=20_000)


def test_open_recent_menu_reopens(qtbot, open_and_wait, window: MainWindow, sample: Path) -> None:
    open_and_wait(window, sample)
    window.close_tab(0)
    assert window.tabs.count() == 0
    window._fill_recent()
    actions = [a for a in window.recent_menu.actions() if a.text() == str(sample.resolve())]
    assert actions
    actions[0].trigger()
    assert window.tabs.count() == 1
    qtbot.waitUntil(lambda: window.current().complete, timeout=20_000)


def test_file_open_event_is_queued_until_listening(qapp, sample: Path) -> None:
    """macOS open events can arrive before the window exists: they wait, then arrive once."""
    assert isinstance(qapp, LoomApplication)
    opened: list[str] = []
    qapp.open_requested.connect(opened.append)
    try:
        qapp._listening = False
        assert qapp.event(QFileOpenEvent(str(sample)))
        qapp.request_open("second.loom.json")
        assert opened == []
        qapp.start_listening()
        assert opened == [str(sample), "second.loom.json"]
        qapp.event(QFileOpenEvent("third.loom.json"))
        assert opened[-1] == "third.loom.json"
    finally:
        qapp.open_requested.disconnect(opened.append)


def test_timeline_click_and_row_selection_move_the_session(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    view.timeline_widget.step_requested.emit(7)
    assert view.session.step == 7 and view.table.currentIndex().row() == 7
    view.table.selectRow(4)
    assert view.session.step == 4
    assert int(round(view.timeline_widget.cursor.value())) == 4
    view.timeline_widget.cursor.setValue(11.2)  # dragging the cursor
    assert view.session.step == 11


def test_sample_opens_only_when_no_file_arrives(qtbot, qapp, sample: Path, tmp_path: Path) -> None:
    """A Finder double-click starts the app without arguments, then sends the file."""
    from loom_desktop.__main__ import SAMPLE_GRACE_MS, start_gui

    other = tmp_path / "clicked.loom.json"
    shutil.copy(sample, other)
    running = start_gui(qapp, [], None, sample=str(sample))
    qtbot.addWidget(running.window)
    try:
        qapp.event(QFileOpenEvent(str(other)))
        qtbot.wait(SAMPLE_GRACE_MS + 200)
        tabs = running.window.tabs
        assert [tabs.tabText(i) for i in range(tabs.count())] == ["clicked.loom.json"]
        qtbot.waitUntil(lambda: running.window.current().complete, timeout=10_000)
    finally:
        running.close()
    running = start_gui(qapp, [], None, sample=str(sample))
    qtbot.addWidget(running.window)
    try:
        qtbot.waitUntil(lambda: running.window.tabs.count() == 1, timeout=5000)
        assert running.window.tabs.tabText(0) == "sample.loom.json"
        qtbot.waitUntil(lambda: running.window.current().complete, timeout=10_000)
        library = running.window.library  # the Runs page is shown and lists the sample
        assert library.dock.isVisible()
        qtbot.waitUntil(
            lambda: "sample.loom.json" in [Path(r.path).name for r in library.controller.runs.runs],
            timeout=10_000,
        )
    finally:
        running.close()
