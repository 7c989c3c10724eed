"""A live journal that turns unreadable: a banner names the line, the tab keeps going.

Why through the real window: the failure was silent (a traceback on the tailer
thread, or a LoadError inside a Qt slot, and a tab saying "waiting" forever); only
the window shows whether the user is told, and pytest-qt fails a test on any
exception that reaches a slot.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loom_core.live.live_status import RUNNING, STOPPED
from loom_desktop.main_window import MainWindow
from tests.core.live_helpers import effect, header, model_result

BAD = {
    "invalid UTF-8": (effect(1, "tool:x", "ok").replace(b'"ok"', b'"\xff\xfe"'), "not UTF-8 text"),
    "deep nesting": (
        effect(1, "tool:x", "ok").replace(b'"ok"', b"[" * 1000 + b"]" * 1000),
        "nested too deeply",
    ),
    "wrong header types": (
        b'{"type": "header", "version": "x"}\n',
        "wrong type in header member 'version'",
    ),
}


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def _follow(window: MainWindow, path: Path):
    view = window.open_path(str(path))
    assert view.live is not None
    view.live.tailer.poll_interval = 0.05
    return view


@pytest.mark.parametrize("name", BAD)
def test_an_unreadable_line_shows_a_banner_and_the_tab_follows_on(
    qtbot, window: MainWindow, tmp_path: Path, name: str
) -> None:
    line, cause = BAD[name]
    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + effect(0, "model", model_result("go", ("x",))))
    view = _follow(window, path)
    qtbot.waitUntil(lambda: view.model.rowCount() == 2, timeout=15_000)
    assert not view.live.banner.isVisible()
    _append(path, line + effect(2, "model", model_result("done")))
    qtbot.waitUntil(lambda: view.model.rowCount() == 3, timeout=15_000)  # the line after it
    banner = view.live.banner
    assert banner.isVisible() and banner.text().startswith("⚠ Line 3 of the journal cannot be read")
    assert cause in banner.text()
    assert window.tabs.indexOf(view) >= 0 and not window.failures  # kept, no dialog
    assert view.session.timeline.kind_name(1) == "model"  # what it had is kept


def test_a_first_header_with_wrong_types_is_named_not_waited_on(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"type": "header", "version": "x"}\n')
    view = _follow(window, path)
    qtbot.waitUntil(lambda: view.live.banner.isVisible(), timeout=15_000)
    assert "Line 1" in view.live.banner.text()
    assert "header member 'version'" in view.live.banner.text()
    _append(path, header("go") + effect(0, "model", model_result("go", ("x",))))
    qtbot.waitUntil(
        lambda: view.model.rowCount() == 2 and view.live.status == RUNNING, timeout=15_000
    )
    assert not window.failures


def test_a_torn_line_completed_later_is_no_problem(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + effect(0, "model", model_result("go", ("x",))))
    view = _follow(window, path)
    qtbot.waitUntil(lambda: view.model.rowCount() == 2, timeout=15_000)
    line = effect(1, "tool:x", "ok")
    _append(path, line[:30])
    qtbot.wait(300)  # several polls see the half line
    _append(path, line[30:])
    qtbot.waitUntil(lambda: view.model.rowCount() == 3, timeout=15_000)
    assert not view.live.banner.isVisible()


def test_a_rewrite_clears_the_banner(qtbot, window: MainWindow, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + BAD["deep nesting"][0] + effect(2, "model", model_result("a")))
    view = _follow(window, path)
    qtbot.waitUntil(lambda: view.live.banner.isVisible(), timeout=15_000)
    path.write_bytes(header("again") + effect(0, "model", model_result("b")))
    qtbot.waitUntil(lambda: view.live.rewrites == 1, timeout=15_000)
    assert not view.live.banner.isVisible()


def test_a_step_that_cannot_be_indexed_is_a_banner_not_an_exception(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_core.views.timeline import TimelineBuilder

    original = TimelineBuilder.extend

    def extend(self, upto=None, unfinished=False):
        original(self, min(upto if upto is not None else 1, 1), unfinished)
        if (upto or 0) > 1:
            raise OverflowError("number out of range")

    monkeypatch.setattr(TimelineBuilder, "extend", extend)
    path = tmp_path / "run.jsonl"
    path.write_bytes(
        header("go") + effect(0, "model", model_result("go", ("x",))) + effect(1, "tool:x", "ok")
    )
    view = _follow(window, path)
    qtbot.waitUntil(lambda: view.live.banner.isVisible(), timeout=15_000)
    assert "Only the first 1 effects can be shown" in view.live.banner.text()
    assert "OverflowError: number out of range" in view.live.banner.text()
    assert view.model.rowCount() >= 1 and window.tabs.indexOf(view) >= 0


def test_the_owner_saying_the_writer_stopped_ends_a_running_tab(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + effect(0, "model", model_result("go", ("x",))))
    view = _follow(window, path)
    qtbot.waitUntil(lambda: view.live.status == RUNNING, timeout=15_000)
    assert "LIVE" in view.live.bar.dot.text()
    view.live.writer_stopped("the demo's proxy stopped (exit status 0)")
    qtbot.waitUntil(lambda: view.live.status == STOPPED, timeout=15_000)
    bar = view.live.bar
    assert bar.status.text() == "stopped without finishing" and "ended" in bar.dot.text()
    assert bar.status.toolTip() == "the demo's proxy stopped (exit status 0)"
    assert bar.save.isEnabled()
