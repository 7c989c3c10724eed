"""File ▸ Open Claude Code Session…: the sessions under CLAUDE_CONFIG_DIR, newest first,
listed by a worker; the one opened is a tab that follows it (also when idle: Claude Code
appends to a session without keeping it open). Fixtures are hand-built from the
documented record types (Claude Code has no producer library)."""

from __future__ import annotations

import os
from pathlib import Path

from loom_desktop.features.claude_sessions.dialog import ClaudeSessionsDialog
from loom_desktop.main_window import MainWindow
from tests.core.formats.claude_fixtures import Session, full_session, text


def _sessions(root: Path) -> list[Path]:
    """Three sessions in two projects, modified an hour apart (the newest last)."""
    paths = []
    for i, (project, prompt) in enumerate(
        [("-home-a", "oldest prompt"), ("-home-b", "middle prompt"), ("-home-a", "newest prompt")]
    ):
        s = Session(session_id=f"00000000-0000-0000-0000-00000000000{i}")
        s.prompt(prompt)
        s.reply([text("ok")])
        path = s.write(root / "projects" / project / f"{s.session_id}.jsonl")
        stamp = 1_700_000_000 + i * 3600
        os.utime(path, (stamp, stamp))
        paths.append(path)
    return paths


def test_dialog_lists_sessions_newest_first(qtbot, qtmodeltester, tmp_path, monkeypatch) -> None:
    root = tmp_path / "claude"
    paths = _sessions(root)
    full_session(root / "projects")  # a sub-agent folder beside a session is not a session
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    dialog = ClaudeSessionsDialog()
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.model.rowCount() == 4, timeout=10_000)
    qtmodeltester.check(dialog.model)
    shown = [Path(s.path) for s in dialog.model.sessions]
    assert shown[1:] == paths[::-1]  # the full session was written just now: newest
    prompts = [dialog.model.index(r, 2).data() for r in range(1, 4)]
    assert prompts == ["newest prompt", "middle prompt", "oldest prompt"]
    assert dialog.model.index(1, 1).data() == "/home/dev/project"  # the session's cwd
    assert "4 session(s)" in dialog.note.text()
    metrics = dialog.table.fontMetrics()  # the project folder is shown whole, on one line
    assert not dialog.table.wordWrap()
    assert dialog.table.columnWidth(1) > metrics.horizontalAdvance("/home/dev/project")


def test_open_from_the_dialog_opens_a_live_tab(qtbot, window: MainWindow, tmp_path, monkeypatch):
    root = tmp_path / "claude"
    path, _main, _sub = full_session(root / "projects")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    dialog = window.claude_sessions_dialog()
    qtbot.waitUntil(lambda: dialog.model.rowCount() == 1, timeout=10_000)
    dialog.accept()
    view = window.current()
    assert view is not None and view.path == str(path)
    assert view.live is not None  # just written: followed live
    qtbot.waitUntil(lambda: view.doc is not None and view.session.count > 10, timeout=10_000)
    view.live.stop()


def test_no_sessions_says_where_it_looked(qtbot, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "nothing"))
    dialog = ClaudeSessionsDialog()
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: "No Claude Code sessions" in dialog.note.text(), timeout=10_000)
    assert str(tmp_path / "nothing") in dialog.note.text()


def test_an_idle_session_is_followed_when_it_is_resumed(
    qtbot, window: MainWindow, tmp_path, monkeypatch
):
    """Claude Code appends to a session without keeping it open: one last written long ago
    (waiting for its next prompt) still grows in the tab when the user goes on."""
    root = tmp_path / "claude"
    path = _sessions(root)[0]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    dialog = window.claude_sessions_dialog()
    qtbot.waitUntil(lambda: dialog.model.rowCount() == 3, timeout=10_000)
    dialog.table.selectRow(2)  # the oldest
    dialog.accept()
    view = window.current()
    assert view is not None and view.path == str(path)
    assert view.live is not None
    qtbot.waitUntil(lambda: view.doc is not None and len(view.doc.effects) == 1, timeout=10_000)
    more = Session(session_id="00000000-0000-0000-0000-000000000000", msg_prefix="more")
    more._n = 10
    more.prompt("go on")
    more.reply([text("went on")])
    with path.open("ab") as fh:
        fh.write(more.data())
    qtbot.waitUntil(lambda: len(view.doc.effects) == 2, timeout=10_000)
    view.live.stop()
