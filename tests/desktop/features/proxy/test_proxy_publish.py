"""Proxy ▸ Start…'s "publish when it stops", as the CLI's ``proxy --publish``: a real proxy
child, a real SDK client, a real PostgreSQL library and S3 API (tests/servers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from loom_core.library.address import open_runs
from loom_core.library.publish import name_store
from loom_core.library.search import Library
from loom_desktop.main_window import MainWindow
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import running_upstream
from tests.desktop.features.proxy.test_proxy_start import _ask

WAIT = 60_000


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeUpstream]:
    """The fake model API; control tokens in a temp dir (the proxy inherits it)."""
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    with running_upstream() as up:
        yield up


@pytest.fixture
def team(pg_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.delenv("LOOM_LIBRARY_URL", raising=False)
    monkeypatch.setenv("LOOM_DESKTOP_CACHE", str(tmp_path / "cache"))
    return pg_url


def _name_store(url: str, store: str) -> None:
    db = open_runs(url)
    try:
        name_store(db, store)
    finally:
        db.close()


def _record_and_stop(qtbot: Any, window: MainWindow, upstream: FakeUpstream, save: Path) -> Any:
    """Start a proxy with "publish when it stops", one exchange through it, Stop."""
    upstream.script(Reply(text="hello from upstream"))
    manager = window.proxy_manager
    dialog = manager.start_dialog()
    assert dialog.publish.isEnabled(), dialog.publish.toolTip()
    dialog.target.setCurrentText("Custom URL")
    dialog.custom.setText(upstream.url)
    dialog.save.setText(str(save))
    dialog.publish.setChecked(True)
    with qtbot.waitSignal(manager.attached, timeout=20_000) as started:
        qtbot.mouseClick(dialog.start_btn, Qt.MouseButton.LeftButton)
    entry = started.args[0]
    out: list[Any] = []
    _ask(int(entry.info["port"]), out, "hi").join(20)
    assert out
    with qtbot.waitSignal(manager.publisher.done, timeout=WAIT) as published:
        manager.stop()
    return published.args[0]


def test_publish_is_offered_only_with_a_team_store_and_done_at_stop(
    qtbot: Any,
    window: MainWindow,
    team: str,
    bucket: str,
    upstream: FakeUpstream,
    tmp_path: Path,
) -> None:
    dialog = window.proxy_manager.start_dialog()  # this computer's library: no team
    assert not dialog.publish.isEnabled() and "team library" in dialog.publish_why.text()
    assert not dialog.spec().publish
    dialog.reject()

    controller = window.library.controller
    window.library.use_library(team)
    qtbot.waitUntil(lambda: controller.team_address() == team, timeout=WAIT)
    dialog = window.proxy_manager.start_dialog()  # a team library with no store yet
    assert not dialog.publish.isEnabled() and "no run store" in dialog.publish_why.text()
    dialog.reject()
    _name_store(team, f"{bucket}/team")
    controller.refresh()
    qtbot.waitUntil(lambda: controller.store == f"{bucket}/team", timeout=WAIT)

    save = tmp_path / "rec" / "s.loom.json"
    lines = _record_and_stop(qtbot, window, upstream, save)
    assert len(lines) == 1 and f"published to {bucket}/team/" in lines[0], lines
    assert save.is_file() and not window.errors
    said = window.statusBar().currentMessage()
    assert said.startswith(f"published s.loom.json to the team library: {bucket}/team/"), said
    with Library(team) as lib:
        (row,) = lib.runs()
    assert row.path == str(save) and row.url is not None and row.source == "published"
    assert row.url.startswith(f"{bucket}/team/")


def test_a_publish_that_fails_is_one_line_and_the_recording_stays(
    qtbot: Any,
    window: MainWindow,
    team: str,
    bucket: str,
    upstream: FakeUpstream,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(QMessageBox, "open", lambda _self: None)
    _name_store(team, "s3://no-such-bucket-here/team")  # the S3 server refuses it
    controller = window.library.controller
    window.library.use_library(team)
    qtbot.waitUntil(lambda: bool(controller.store), timeout=WAIT)
    save = tmp_path / "rec" / "s.loom.json"
    lines = _record_and_stop(qtbot, window, upstream, save)
    assert len(lines) == 1 and "not published" in lines[0]
    assert f"loom-core runs publish {save}" in lines[0]
    assert len(window.errors) == 1 and "\n" not in window.errors[0]
    assert save.is_file()  # the recording, as recorded
    with Library(team) as lib:
        assert [r.url for r in lib.runs()] in ([], [None])  # not listed as available
