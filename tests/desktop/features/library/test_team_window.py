"""The window on a team's library (a real PostgreSQL server and S3 API, started by the tests).

Another laptop is the real ``runs`` command in its own process, with its own
``LOOM_HOST`` and folder; this window is a second machine. Settings ▸ Library… points
the window at the team's database; the Runs page then lists what the other laptop
published, search finds its steps, and a hit opens the run, fetched from the bucket into
the cache, at the hit's step with the search's terms in the tab's filter.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from loom_core.views.steps import step_seq
from loom_desktop.features.library.settings_dialog import SECRETS
from loom_desktop.main_window import MainWindow
from tests.core.team.test_team_library import SAMPLE, Laptop

WAIT = 60_000


def _choose(qtbot: Any, window: MainWindow, url: str) -> Any:
    """Settings ▸ Library…: the team's URL, tested, then OK."""
    dialog = window.library.settings_dialog()
    dialog.team.setChecked(True)
    dialog.url.setText(url)
    dialog.test()
    qtbot.waitUntil(lambda: dialog.status.text().startswith(("✓", "✗")), timeout=WAIT)
    return dialog


def test_the_window_lists_finds_and_opens_what_another_laptop_published(
    qtbot: Any,
    window: MainWindow,
    here: str,
    pg_url: str,
    bucket: str,
    teammate: Laptop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = teammate
    run = other.folder / "theirs.loom.json"
    shutil.copy(SAMPLE, run)
    other.run("publish", run)
    run.unlink()  # only the bucket has it now: this window must fetch it

    dialog = _choose(qtbot, window, pg_url)
    assert "over TLS" in dialog.status.text() and "1 runs" in dialog.status.text()
    assert dialog.store.text() == f"{bucket}/team"  # the library's store, read back
    dialog.buttons.accepted.emit()  # OK
    qtbot.waitUntil(lambda: dialog.result() == dialog.DialogCode.Accepted, timeout=WAIT)
    assert window.settings.library == pg_url
    controller = window.library.controller
    qtbot.waitUntil(
        lambda: (
            [(r.host, Path(r.path).name) for r in controller.runs.runs]
            == [("laptop-b", "theirs.loom.json")]
        ),
        timeout=WAIT,
    )
    cells = [controller.runs.index(0, c).data() for c in range(controller.runs.columnCount())]
    assert cells[-1] == "laptop-b-user@laptop-b"
    again = window.library.settings_dialog()  # the store in use, shown without a new look
    assert again.store.text() == f"{bucket}/team" and again.status.text() == SECRETS
    qtbot.keyClicks(again.url, "2")  # another database: the store shown was not its
    assert again.store.text() == ""
    again.reject()

    window.library.page.search.setText("tool:git_push")
    qtbot.waitUntil(lambda: [h.seq for h in controller.hits.hits] == [20, 21], timeout=WAIT)
    assert " on laptop-b " in window.library.page.hits.model().index(0).data()
    noted: list[str] = []
    monkeypatch.setattr(controller, "note", lambda path, *_a: noted.append(path))
    window.library.page._open_hit(window.library.page.hits.model().index(0))
    qtbot.waitUntil(lambda: window.current() is not None, timeout=WAIT)
    view = window.current()
    qtbot.waitUntil(lambda: view.complete and view.session.timeline is not None, timeout=WAIT)
    assert Path(view.path).read_bytes() == SAMPLE.read_bytes()
    assert str(tmp_path / "desk-cache") in view.path  # the cache, never the other's path
    qtbot.waitUntil(lambda: view.filter_box.text() == "tool:git_push", timeout=WAIT)
    assert step_seq(view.session.timeline, view.session.step) == 20  # the hit's step
    assert view.path not in noted  # the cached copy is not listed as a run of this machine
    # no fsspec thread is left behind: the app would no longer fork to checksum a run
    assert not [t.name for t in threading.enumerate() if t.name in ("fsspecIO", "asyncio_0")]


def test_a_run_that_was_never_published_says_where_it_is(
    qtbot: Any, window: MainWindow, here: str, pg_url: str, tmp_path: Path, monkeypatch: Any
) -> None:
    other = Laptop("laptop-b", tmp_path, pg_url)
    shutil.copy(SAMPLE, other.folder / "kept.loom.json")
    other.run("index", other.folder)  # listed for the team, its file only on laptop-b
    monkeypatch.setattr(QMessageBox, "exec", lambda _self: 0)
    monkeypatch.setattr(QMessageBox, "open", lambda _self: None)
    window.library.use_library(pg_url)
    controller = window.library.controller
    qtbot.waitUntil(lambda: len(controller.runs.runs) == 1, timeout=WAIT)
    tabs = window.tabs.count()
    window.library.page._open_run(controller.runs.index(0, 0))
    qtbot.waitUntil(lambda: bool(window.errors), timeout=WAIT)
    assert "kept.loom.json" in window.errors[-1]
    assert "on laptop-b and it was never published" in window.errors[-1]
    assert window.tabs.count() == tabs


def test_a_password_in_the_url_is_refused_and_the_environment_wins(
    qtbot: Any, window: MainWindow, here: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog = window.library.settings_dialog()
    dialog.team.setChecked(True)
    dialog.url.setText("postgresql://loom:hunter2@127.0.0.1:1/loom")
    dialog.buttons.accepted.emit()
    assert dialog.isVisible() and "~/.pgpass" in dialog.status.text()
    assert "hunter2" not in dialog.status.text() and window.settings.library == ""
    dialog.reject()
    monkeypatch.setenv("LOOM_LIBRARY_URL", "postgresql://ci@db/loom")
    dialog = window.library.settings_dialog()
    assert "LOOM_LIBRARY_URL is set" in dialog.status.text() and not dialog.url.isEnabled()
    assert dialog.url.text() == "postgresql://ci@db/loom" and dialog.test_btn.isEnabled()
    dialog.reject()


def test_a_fetched_transcript_opens_as_the_finished_run_it_is(
    qtbot: Any,
    window: MainWindow,
    here: str,
    pg_url: str,
    bucket: str,
    teammate: Laptop,
    tmp_path: Path,
) -> None:
    """A Claude Code session fetched a moment ago has a fresh file, but no agent writes it:
    its tab is not live ("running")."""
    from tests.core.formats.real_world import real_files

    other = teammate
    sessions = real_files("claude-code", ".jsonl")
    if not sessions:
        pytest.skip("the real-world Claude Code sessions are not beside this checkout")
    session = sessions[0]
    copy = other.folder / "session.jsonl"
    shutil.copy(session, copy)
    other.run("publish", copy)
    window.library.use_library(pg_url)
    controller = window.library.controller
    qtbot.waitUntil(lambda: len(controller.runs.runs) == 1, timeout=WAIT)
    window.library.page._open_run(controller.runs.index(0, 0))
    qtbot.waitUntil(lambda: window.current() is not None, timeout=WAIT)
    view = window.current()
    qtbot.waitUntil(lambda: view.complete, timeout=WAIT)
    assert str(tmp_path / "desk-cache") in view.path and view.live is None


@pytest.mark.parametrize("saved", ["library.sqlite3", "mysql://x@y/z", "postgresql://u:pw@h/d"])
def test_a_hand_edited_setting_that_is_no_usable_url_is_ignored(
    saved: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is written where the user did not choose: a path or another scheme is not
    a library address here, and a URL with a password is never used."""
    from loom_desktop.features.library.settings_dialog import chosen_address

    monkeypatch.delenv("LOOM_LIBRARY_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert chosen_address(saved) is None
    assert chosen_address("postgresql://u@h/d") == "postgresql://u@h/d"


def test_what_a_teammate_publishes_later_is_listed_without_asking(
    qtbot: Any,
    window: MainWindow,
    here: str,
    pg_url: str,
    bucket: str,
    teammate: Laptop,
    tmp_path: Path,
) -> None:
    """No file changes here when a teammate publishes: the team's list is asked again."""
    other = teammate
    window.library.use_library(pg_url)
    controller = window.library.controller
    controller.team_poll.setInterval(200)  # (30 s for a user)
    qtbot.waitUntil(lambda: controller.store == f"{bucket}/team", timeout=WAIT)
    assert controller.team_poll.isActive() and controller.runs.runs == []
    later = other.folder / "later.loom.json"
    shutil.copy(SAMPLE, later)
    other.run("publish", later)
    qtbot.waitUntil(
        lambda: [Path(r.path).name for r in controller.runs.runs] == ["later.loom.json"],
        timeout=WAIT,
    )
    window.library.use_library("")  # this computer's own library: nobody else writes it
    assert not controller.team_poll.isActive()
