"""Help ▸ Run offline demo: fake model + real proxy + scripted agent, decided by a click."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QProcess, Qt

from loom_core.demo import FakeModelServer
from loom_core.formats.loader import load
from loom_desktop.main_window import MainWindow


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    rt = tmp_path / "rt"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(rt))
    return rt


def _demo_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("loom-demo")]


def held_demo(qtbot, window: MainWindow) -> tuple[Any, Any]:
    """Help ▸ Run offline demo, once its deploy call is held: (the demo, its proxy's entry)."""
    demo = window.run_demo(pace=0.05)
    manager = window.proxy_manager
    qtbot.waitUntil(lambda: bool(manager.proxies) and demo.agent is not None, timeout=20_000)
    entry = manager.proxies[0]
    qtbot.waitUntil(lambda: entry.panel.current() is not None, timeout=20_000)
    return demo, entry


@pytest.mark.parametrize("approve", [True, False])
def test_demo_end_to_end(qtbot, window: MainWindow, runtime: Path, approve: bool) -> None:
    demo = window.run_demo(pace=0.05)
    manager = window.proxy_manager
    qtbot.waitUntil(lambda: bool(manager.proxies), timeout=20_000)
    entry = manager.proxies[0]
    assert entry.view is window.current() and entry.panel is not None
    qtbot.waitUntil(lambda: entry.panel.current() is not None, timeout=20_000)
    call = entry.panel.current()
    assert call.tool == "deploy" and call.rule == "deploy*"
    assert demo.agent.state() == QProcess.ProcessState.Running  # waiting on the held call
    qtbot.waitUntil(lambda: entry.view.model.rowCount() >= 2, timeout=15_000)  # live run shown
    button = entry.panel.approve_btn if approve else entry.panel.deny_btn
    with qtbot.waitSignal(demo.finished, timeout=30_000) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert blocker.args == [0]
    text = "\n".join(demo.output)
    assert "using the anthropic SDK" in text
    if approve:
        assert "agent: running deploy" in text and "Release 1.4.0 is deployed" in text
    else:
        assert "agent: running deploy" not in text and "[loom shield] Blocked" in text
    # everything the demo started is stopped
    assert demo.agent.state() == QProcess.ProcessState.NotRunning
    assert demo.proxy.process.state() == QProcess.ProcessState.NotRunning
    assert demo.proxy.process.exitCode() == 0
    assert not demo.running and not manager.proxies and not _demo_threads()
    doc = load(demo.save)  # the finalized trace
    assert doc.is_proxy


def test_window_close_stops_a_running_demo(qtbot, runtime: Path) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    demo = win.run_demo(pace=0.05)
    qtbot.waitUntil(
        lambda: demo.agent is not None and bool(win.proxy_manager.proxies), timeout=20_000
    )
    panel = win.proxy_manager.proxies[0].panel
    qtbot.waitUntil(lambda: panel.current() is not None, timeout=20_000)  # held, mid-run
    win.close()
    assert demo.done and not demo.running and not _demo_threads()
    assert demo.agent.state() == QProcess.ProcessState.NotRunning


def test_agent_without_the_sdk_uses_urllib() -> None:
    server = FakeModelServer(pace=0)
    url = server.start()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "loom_core.demo.agent", "--base-url", url, "--pace", "0"],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "LOOM_DEMO_NO_SDK": "1"},
        )
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert "using urllib" in result.stdout and "agent: done" in result.stdout
    assert server.requests == 4 and not _demo_threads()


def test_the_output_panel_shows_what_the_agent_printed(
    qtbot, window: MainWindow, runtime: Path
) -> None:
    demo, entry = held_demo(qtbot, window)
    with qtbot.waitSignal(demo.finished, timeout=30_000):
        qtbot.mouseClick(entry.panel.approve_btn, Qt.MouseButton.LeftButton)
    out = window.demo_panel
    assert out.isVisible() and "finished" in out.state.text() and "status 0" in out.state.text()
    stdout = [text for channel, text in out.lines if channel == "stdout"]
    assert stdout[0].startswith("agent: using the anthropic SDK") and stdout[-1] == "agent: done"
    shown = out.text.toPlainText()
    assert "agent: done" in shown and 'running Bash {"command": "pytest -q"}' in shown


def test_a_failing_agent_is_reported_with_its_status_and_output(
    qtbot, window: MainWindow, runtime: Path
) -> None:
    """Regression: the agent exited (1), the panels vanished and the tab said running;
    then the tab said "stopped" and the Runs page "finished": an error ended it, so both
    say failed, for the same reason."""
    from loom_core.library.search import Library
    from loom_core.live.live_status import FAILED

    demo, entry = held_demo(qtbot, window)
    qtbot.waitUntil(lambda: entry.view.model.rowCount() >= 2, timeout=15_000)
    demo.model.stop()  # the model goes away: the agent's next call fails
    with qtbot.waitSignal(demo.finished, timeout=30_000) as blocker:
        qtbot.mouseClick(entry.panel.approve_btn, Qt.MouseButton.LeftButton)
    assert blocker.args == [1] and demo.failure == "exited with status 1"
    out = window.demo_panel
    assert "FAILED" in out.state.text() and "exited with status 1" in out.state.text()
    assert any(c == "stdout" and t.startswith("agent: the API call failed") for c, t in out.lines)
    assert window.errors[-1].startswith("The demo's agent exited with status 1.")
    assert "agent: the API call failed" in window.errors[-1]
    live = entry.view.live
    qtbot.waitUntil(lambda: live.status == FAILED, timeout=15_000)
    qtbot.waitUntil(
        lambda: live.bar.status.toolTip() == "the demo's agent exited with status 1", timeout=15_000
    )
    assert not demo.running and not _demo_threads()
    assert window.library.controller.indexer.wait_idle(30)
    with Library() as lib:
        row = lib.run(demo.save)
    assert row is not None and (row.outcome, row.why) == (FAILED, live.bar.status.toolTip())


def test_edit_and_approve_changes_what_the_demo_deploys(
    qtbot, window: MainWindow, runtime: Path
) -> None:
    """Regression: after editing "env" to "staging" the tool still said "deployed to production"."""
    demo, entry = held_demo(qtbot, window)
    entry.view.table.setFocus()
    qtbot.keyClick(entry.view.table, "e")  # from the run's step list, not the panel
    assert entry.panel.editing
    entry.panel.args.setPlainText(json.dumps({"env": "staging", "version": "1.4.0"}))
    with qtbot.waitSignal(demo.finished, timeout=30_000) as blocker:
        qtbot.mouseClick(entry.panel.approve_btn, Qt.MouseButton.LeftButton)
    assert blocker.args == [0]
    text = "\n".join(demo.output)
    assert 'agent: running deploy {"env": "staging", "version": "1.4.0"}' in text
    assert "tool deploy: deployed 1.4.0 to staging" in text
    assert "model: Release 1.4.0 is deployed to staging. Done." in text
    assert "to production (3 instances" not in text
    doc = load(demo.save)
    [event] = [e for e in doc.shield_events if e.action == "approve"]
    assert event.model_dump().get("edited_input") == {"env": "staging", "version": "1.4.0"}


def test_demo_runs_go_to_the_runs_folder_with_tab_titles_of_their_own(
    qtbot, window: MainWindow, runtime: Path, runs_dir: Path
) -> None:
    """Regression: each demo ran in a temp folder, so two demo tabs were told apart by
    the temp folders' random names ("demo.journal.jsonl · loom-demo-x3k9…")."""
    titles = []
    for n in range(2):
        demo, entry = held_demo(qtbot, window)
        with qtbot.waitSignal(demo.finished, timeout=30_000):
            qtbot.mouseClick(entry.panel.deny_btn, Qt.MouseButton.LeftButton)
        assert demo.save == runs_dir / ("demo.loom.json" if n == 0 else "demo-2.loom.json")
        titles.append(window.tabs.tabText(window.tabs.indexOf(demo.view)))
    assert [t.lstrip("● ") for t in titles] == ["demo.journal.jsonl", "demo-2.journal.jsonl"]
