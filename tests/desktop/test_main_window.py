"""Drive the real window: open, step with the keyboard, filter, read the context view."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from loom_core.views.timeline import F_DENIED, F_ERROR, K_MODEL
from loom_desktop.main_window import MainWindow


def test_opens_sample_and_shows_status(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    tl = view.session.timeline
    assert view.model.rowCount() == len(tl) == 30
    qtbot.waitUntil(lambda: view.checksum == "valid", timeout=20_000)
    window.update_status()
    labels = window.status_labels
    assert labels["step"].text() == f"prompt · 1 of {len(tl)}"
    assert labels["checksum"].text() == "checksum valid"
    assert labels["format"].text() == "trace v2"
    assert labels["cost"].text().startswith("cost $0 / $0.13")


def test_keyboard_stepping(qtbot, open_and_wait, window: MainWindow, sample: Path) -> None:
    view = open_and_wait(window, sample)
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Right)
    qtbot.keyClick(view.table, Qt.Key.Key_Right)
    assert view.session.step == 2
    qtbot.keyClick(view.table, Qt.Key.Key_Left)
    assert view.session.step == 1
    qtbot.keyClick(view.table, Qt.Key.Key_End)
    assert view.session.step == len(view.session.timeline) - 1
    qtbot.keyClick(view.table, Qt.Key.Key_Home)
    assert view.session.step == 0
    view.session.set_step(2)  # a model step
    qtbot.keyClick(view.table, Qt.Key.Key_Period)
    tl = view.session.timeline
    assert tl.kind[view.session.step] == K_MODEL and view.session.step > 2
    qtbot.keyClick(view.table, Qt.Key.Key_Comma)
    assert view.session.step == 2
    assert view.table.currentIndex().row() == 2
    assert int(round(view.timeline_widget.cursor.value())) == 2


def test_space_plays_and_pauses(qtbot, open_and_wait, window: MainWindow, sample: Path) -> None:
    view = open_and_wait(window, sample)
    view.play_timer.setInterval(10)
    qtbot.keyClick(view.table, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: view.session.step >= 3, timeout=5000)
    qtbot.keyClick(view.table, Qt.Key.Key_Space)
    assert not view.play_timer.isActive()


def test_filter_by_kind_tool_and_text(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    qtbot.keyClicks(view.filter_box, "is:error")
    # the first matches stream in before the search ends; the note comes with the end
    qtbot.waitUntil(
        lambda: (
            view.model.rows is not None
            and not view._filter_timer.isActive()
            and not view._filter_task.running
        ),
        timeout=5000,
    )
    tl = view.session.timeline
    errors = [s for s in range(len(tl)) if tl.flags[s] & F_ERROR]
    assert set(errors) < set(view.model.rows)  # and blocked calls, and the steps that made them
    assert view.filter_note.text() == f"{len(view.model.rows)} of {len(tl)} rows shown"
    view.filter_box.setText("kind:tool:read_file")
    qtbot.waitUntil(lambda: view.model.rowCount() == 3, timeout=5000)
    reads = list(view.model.rows)
    assert all(tl.kind_name(s) == "tool:read_file" for s in reads)
    view.filter_box.setText("tool:read_file")  # ... and the model steps that called it
    with_calls = sorted({*reads, *(tl.call_of[s] for s in reads)})
    qtbot.waitUntil(lambda: list(view.model.rows or ()) == with_calls, timeout=5000)
    assert all(tl.kind_name(s) == "model" for s in with_calls if s not in reads)
    view.filter_box.setText("Brûlée")  # non-ASCII text is \\u-escaped in the raw bytes
    qtbot.waitUntil(lambda: view.model.rows is not None and len(view.model.rows) > 0, timeout=5000)
    view.filter_box.clear()
    qtbot.waitUntil(lambda: view.model.rows is None, timeout=5000)
    assert view.model.rowCount() == len(tl) and view.filter_note.isHidden()


def test_filter_says_what_is_wrong_and_when_nothing_matches(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    note = view.filter_note
    view.filter_box.setText("kind:modle")
    qtbot.waitUntil(lambda: note.isVisible(), timeout=5000)
    assert view.model.rowCount() == 0  # not every step, as if the typo were not there
    assert (
        "modle" in note.text() and "model, tool" in note.text() and "#c62828" in note.styleSheet()
    )
    view.filter_box.setText("no such text anywhere")
    qtbot.waitUntil(lambda: "no step matches “no such text anywhere”" in note.text(), timeout=5000)
    assert view.model.rowCount() == 0


def test_context_view_shows_frame_delta_and_tool_result(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    tl = view.session.timeline
    denied = next(s for s in range(len(tl)) if tl.flags[s] & F_DENIED)
    view.session.set_step(denied + 2)  # the model call after the blocked one
    qtbot.waitUntil(lambda: view.context_view.step == denied + 2, timeout=3000)
    html = view.context_view.browser.toHtml()
    text = view.context_view.browser.toPlainText()
    assert "Messages the model saw" in text and "NEW" in text
    assert "#fff6c7" in html  # new messages are tinted
    view.session.set_step(denied)
    qtbot.waitUntil(lambda: view.context_view.step == denied, timeout=3000)
    assert "shield deny via rule" in view.context_view.browser.toPlainText()
    error = next(s for s in range(len(tl)) if tl.flags[s] & F_ERROR)
    view.session.set_step(error)
    qtbot.waitUntil(lambda: view.context_view.step == error, timeout=3000)
    text = view.context_view.browser.toPlainText()
    assert "Result of tool:run_tests ERROR" in text and "Call (made at step" in text
    view.context_view.setCurrentWidget(view.context_view.raw)
    raw = json.loads(view.context_view.raw.toPlainText())
    assert raw["kind"] == "tool:run_tests" and raw["result"].startswith("ERROR:")


def test_bad_file_gives_dialog_and_other_tabs_keep_working(
    qtbot, open_and_wait, window: MainWindow, sample: Path, tmp_path: Path
) -> None:
    good = open_and_wait(window, sample)
    bad = tmp_path / "broken.loom.json"
    bad.write_text('{"version": 2, "log": [')
    window.open_path(str(bad))
    qtbot.waitUntil(lambda: bool(window.errors), timeout=10_000)
    assert str(bad) in window.errors[-1] and "truncated" in window.errors[-1]
    boxes = [w for w in window.findChildren(QMessageBox) if w.isVisible()]
    assert boxes and str(bad) in boxes[0].text()
    boxes[0].close()
    assert window.tabs.count() == 1 and window.current() is good
    good.session.move(1)
    assert good.session.step == 1


def test_recent_files_and_geometry_persist(qtbot, open_and_wait, sample: Path) -> None:
    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(1000, 700)
    first.show()
    open_and_wait(first, sample)
    first.close()
    second = MainWindow()
    qtbot.addWidget(second)
    assert second.settings.recent_files[0] == str(sample.resolve())
    assert second.settings.geometry_bytes() is not None
    second.close()


def test_enter_goes_from_the_filter_to_the_first_match_and_escape_clears(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    window.activateWindow()
    view.filter_box.setFocus()
    qtbot.keyClicks(view.filter_box, "kind:tool:read_file")
    qtbot.keyClick(view.filter_box, Qt.Key.Key_Return)  # before the filter has even run
    tl = view.session.timeline
    qtbot.waitUntil(lambda: tl.kind_name(view.session.step) == "tool:read_file", timeout=5000)
    assert view.table.hasFocus() and view.table.currentIndex().row() == 0
    view.filter_box.setFocus()
    qtbot.keyClick(view.filter_box, Qt.Key.Key_Escape)
    assert view.filter_box.text() == "" and view.filter_box.hasFocus()
    qtbot.keyClick(view.filter_box, Qt.Key.Key_Escape)
    assert view.table.hasFocus()
    qtbot.waitUntil(lambda: view.model.rows is None, timeout=5000)
