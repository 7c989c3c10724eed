"""Proxy ▸ Start…: the dialog, the spawned proxy, a real SDK client, approvals, Stop, re-attach."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from PySide6.QtCore import QProcess, Qt
from PySide6.QtWidgets import QApplication

from loom_core.formats.loader import load
from loom_core.live.live_status import RUNNING, STOPPED
from loom_desktop.features.proxy.launcher import ProxySpec, proxies_dir
from loom_desktop.features.proxy.start_dialog import StartProxyDialog, preview
from loom_desktop.main_window import MainWindow
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import CLIENT_S, NEVER_S, running_upstream
from tests.desktop.features.proxy.spawn import ready_proxy


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Control tokens in a temp dir (the spawned proxy inherits the environment)."""
    rt = tmp_path / "rt"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(rt))
    return rt


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream() as up:
        yield up


def test_preview_runs_the_shield_engine() -> None:
    rows, problem = preview(ProxySpec(confirm=["deploy*"], deny=["Bash(*rm -rf*)"]))
    assert not problem
    actions = {
        call.split("(")[0] + ("/rm" if "rm -rf" in call else ""): action
        for call, action, _via, _rule in rows
    }
    assert actions["deploy"] == "confirm" and actions["Bash/rm"] == "deny"
    assert actions["Read"] == "allow"
    rows, problem = preview(ProxySpec(policies=["/nonexistent/policy.yml"]))
    assert not rows and "/nonexistent/policy.yml" in problem
    rows, _ = preview(ProxySpec(profiles=["ci-safe"]))
    assert dict((c, a) for c, a, *_ in rows)['WebFetch({"url": "https://example.com"})'] == "deny"


def test_dialog_preview_table_follows_the_fields(qtbot) -> None:
    dialog = StartProxyDialog()
    qtbot.addWidget(dialog)
    dialog.confirm.setText("deploy*; Bash(*git push*)")
    cells = {
        dialog.table.item(r, 0).text(): dialog.table.item(r, 1).text()
        for r in range(dialog.table.rowCount())
    }
    assert cells['deploy({"env": "production"})'] == "confirm"
    assert cells['Bash({"command": "git push origin main"})'] == "confirm"
    dialog.target.setCurrentText("OpenAI")
    assert dialog.spec().dialect == "openai" and dialog.spec().target == "https://api.openai.com"


def _ask(port: int, out: list[Any], content: str) -> threading.Thread:
    client = anthropic.Anthropic(
        base_url=f"http://127.0.0.1:{port}", api_key="sk-ant-test", max_retries=0, timeout=CLIENT_S
    )

    def run() -> None:
        out.append(
            client.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=100,
                messages=[{"role": "user", "content": content}],
            )
        )

    thread = threading.Thread(target=run, name="sdk-client", daemon=True)
    thread.start()
    return thread


def test_start_use_approve_stop(
    qtbot, window: MainWindow, upstream: FakeUpstream, runtime: Path, tmp_path: Path
) -> None:
    upstream.script(
        Reply(text="hello from upstream"),
        Reply(text="shipping", calls=[("t1", "deploy", {"env": "prod"})]),
    )
    manager = window.proxy_manager
    dialog = manager.start_dialog()
    dialog.target.setCurrentText("Custom URL")
    dialog.custom.setText(upstream.url)
    dialog.confirm.setText("deploy*")
    dialog.timeout.setValue(NEVER_S)  # the test decides: no timeout may race it
    save = tmp_path / "out" / "s.loom.json"
    dialog.save.setText(str(save))
    with qtbot.waitSignal(manager.attached, timeout=20_000) as blocker:
        qtbot.mouseClick(dialog.start_btn, Qt.MouseButton.LeftButton)
    entry = blocker.args[0]
    port = int(entry.info["port"])
    assert entry.dock.lines == [  # a custom upstream: the proxy serves both dialects
        f"export ANTHROPIC_BASE_URL=http://127.0.0.1:{port}",
        f"export OPENAI_BASE_URL=http://127.0.0.1:{port}/v1",
    ]
    qtbot.mouseClick(entry.dock.copy_btn, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == entry.dock.line
    assert entry.view is window.current() and entry.view.path == entry.info["journal"]
    assert entry.panel is not None and entry.connection.confirm_timeout == NEVER_S

    out: list[Any] = []
    _ask(port, out, "hi").join(20)
    assert out and out[0].content[0].text == "hello from upstream"
    qtbot.waitUntil(lambda: entry.view.model.rowCount() >= 1, timeout=15_000)  # the live tab
    runs = window.library.controller.runs
    qtbot.waitUntil(  # the Runs page lists the recording while it runs, its step included:
        # the agent answered, but the proxy records on (the next request may come)
        lambda: [(r.path, r.outcome, r.steps) for r in runs.runs] == [(str(save), RUNNING, 1)],
        timeout=15_000,
    )
    assert entry.view.live.status == RUNNING  # as its live tab says

    thread = _ask(port, out, "ship it")
    qtbot.waitUntil(lambda: entry.panel.current() is not None, timeout=15_000)
    assert entry.panel.current().tool == "deploy"
    assert "belongs to the model call after step 0 of" in entry.panel.title.text()  # a seq
    held = entry.view.timeline_widget.held.data
    assert len(held) == 1 and held["x"][0] == entry.view.session.count  # flagged on the timeline
    qtbot.mouseClick(entry.panel.approve_btn, Qt.MouseButton.LeftButton)
    thread.join(20)
    assert len(out) == 2 and [b.type for b in out[1].content] == ["text", "tool_use"]
    qtbot.waitUntil(lambda: entry.view.model.rowCount() >= 2, timeout=15_000)

    proc = entry.proxy.process
    manager.stop()
    assert proc.state() == QProcess.ProcessState.NotRunning and proc.exitCode() == 0
    assert not manager.proxies and entry.connection not in window.proxies
    assert save.exists() and not Path(entry.proxy.ready_file).exists()
    doc = load(save)
    assert doc.is_proxy
    # its last model call asked for a tool, and its writer is gone: not "running" forever
    qtbot.waitUntil(lambda: entry.view.live.status == STOPPED, timeout=15_000)
    assert "the proxy that wrote it stopped" in entry.view.live.bar.status.toolTip()
    qtbot.waitUntil(  # the Runs page says what the tab says (one function of the facts)
        lambda: (
            [(r.path, r.outcome, r.steps, r.why) for r in runs.runs]
            == [(str(save), STOPPED, 2, "its proxy stopped")]
        ),
        timeout=15_000,
    )


def test_bad_flags_show_the_proxy_error(
    qtbot, window: MainWindow, runtime: Path, tmp_path: Path
) -> None:
    manager = window.proxy_manager
    spec = ProxySpec(save=str(tmp_path / "s.loom.json"), policies=[str(tmp_path / "nope.yml")])
    with qtbot.waitSignal(manager.failed, timeout=20_000) as blocker:
        proxy = manager.launch(spec)
    assert "nope.yml" in blocker.args[0] and "cannot read the policy file" in blocker.args[0]
    assert proxy.process.exitCode() == 2
    assert window.errors and "nope.yml" in window.errors[-1]
    assert not manager.proxies and not manager.pending


def test_reattach_alive_and_forget_dead(
    qtbot, window: MainWindow, runtime: Path, tmp_path: Path
) -> None:
    folder = proxies_dir()
    folder.mkdir(parents=True, exist_ok=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(10)
    stale = folder / "stale.ready.json"
    stale.write_text(json.dumps({"version": 1, "pid": dead.pid, "port": 1}))
    ready = folder / "alive.ready.json"
    (folder / "alive.app.json").write_text(json.dumps({"dialect": "openai", "confirm_timeout": 40}))
    with ready_proxy(ready, tmp_path / "r.loom.json", "--confirm", "deploy*") as proc:
        found = window.proxy_manager.reattach()
        assert len(found) == 1 and not stale.exists()
        entry = found[0]
        assert entry.proxy.pid == proc.pid and entry.connection.confirm_timeout == 40
        assert entry.dock.line.startswith("export OPENAI_BASE_URL=http://127.0.0.1:")
        assert entry.dock.line.endswith("/v1")
        assert entry.view.path == json.loads(ready.read_text())["journal"]
        assert window.proxy_manager.reattach() == []  # already attached
        qtbot.waitUntil(lambda: entry.panel.status.text() == "no held calls", timeout=10_000)
        window.close()  # stops it with SIGTERM: a clean stop (exit 0, ready file removed)
        assert proc.wait(15) == 0
        assert not ready.exists() and not (folder / "alive.app.json").exists()


def test_an_existing_trace_is_replaced_only_when_confirmed(qtbot, tmp_path: Path) -> None:
    """Start with a save path that holds a run asks first; only Replace passes --force."""
    from PySide6.QtWidgets import QMessageBox

    save = tmp_path / "kept.loom.json"
    save.write_text('{"version": 2}')
    dialog = StartProxyDialog()
    qtbot.addWidget(dialog)
    dialog.save.setText(str(save))
    accepted: list[ProxySpec] = []
    dialog.accepted.connect(lambda: accepted.append(dialog.spec()))
    dialog.start_btn.click()
    box = dialog.confirm_box
    assert isinstance(box, QMessageBox) and str(save) in box.text() and not accepted
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert not accepted and save.read_text() == '{"version": 2}'
    dialog.start_btn.click()
    replace = next(
        b
        for b in dialog.confirm_box.buttons()
        if dialog.confirm_box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole
    )
    replace.click()
    assert len(accepted) == 1 and accepted[0].force and "--force" in accepted[0].args("r.json")
    assert "--force" not in ProxySpec(save=str(tmp_path / "new.loom.json")).args("r.json")


def test_stop_while_a_call_is_held_asks_first_then_the_agent_gets_a_denial(
    qtbot, window: MainWindow, upstream: FakeUpstream, runtime: Path, tmp_path: Path
) -> None:
    """Regression: Stop dropped the held call's connection; the agent saw "Server
    disconnected". Now it asks, and the held call is denied with a reason."""
    from PySide6.QtWidgets import QMessageBox

    upstream.script(Reply(text="shipping", calls=[("t1", "deploy", {"env": "prod"})]))
    manager = window.proxy_manager
    spec = ProxySpec(
        target=upstream.url, save=str(tmp_path / "s.loom.json"), confirm_timeout=NEVER_S
    )
    spec.confirm = ["deploy*"]
    with qtbot.waitSignal(manager.attached, timeout=20_000) as blocker:
        manager.launch(spec)
    entry = blocker.args[0]
    out: list[Any] = []
    thread = _ask(int(entry.info["port"]), out, "ship it")
    qtbot.waitUntil(lambda: entry.panel.current() is not None, timeout=15_000)
    assert manager.stop_menu() == 0  # Proxy ▸ Stop asks first
    box = manager.confirm_box
    assert box is not None and box.isVisible()
    assert box.text().startswith(f"Stop the proxy on {entry.info['url']}? 1 tool call is held")
    assert '"the proxy was stopped"' in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert entry.proxy.running and entry in manager.proxies and not out
    qtbot.mouseClick(entry.dock.stop_btn, Qt.MouseButton.LeftButton)  # the dock's Stop too
    box = manager.confirm_box
    [stop] = [
        b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole
    ]
    stop.click()
    thread.join(20)
    assert out, "the agent got no answer"
    texts = [b.text for b in out[0].content if b.type == "text"]
    assert any("denied by the operator (reason: the proxy was stopped)" in t for t in texts)
    assert not manager.proxies and entry.proxy.process.exitCode() == 0
    assert "stopped 1 proxy" in window.statusBar().currentMessage()
