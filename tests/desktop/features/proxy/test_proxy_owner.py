"""Only the app that started a proxy stops it: another window never takes it over while that app runs.

Regression: ``loom-desktop --screenshot`` (a window of its own that closes at once)
re-attached the running app's demo proxy and, closing, stopped it with SIGTERM while
its deploy call was held; the agent died with "Server disconnected". The sidecar's
``stopped_by`` named the screenshot process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loom_core.proxy.sidecar import read_sidecar
from loom_desktop.features.proxy.launcher import ProxySpec, proxies_dir
from loom_desktop.features.proxy.ownership import started
from loom_desktop.main_window import MainWindow
from tests.core.clis import ROOT
from tests.desktop.features.proxy.spawn import ready_proxy


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    rt = tmp_path / "rt"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(rt))
    return rt


def test_a_screenshot_process_leaves_the_running_apps_proxy_alone(
    qtbot, window: MainWindow, runtime: Path, tmp_path: Path
) -> None:
    manager = window.proxy_manager
    spec = ProxySpec(target="http://127.0.0.1:9", save=str(tmp_path / "p.loom.json"))
    spec.confirm = ["deploy*"]
    with qtbot.waitSignal(manager.attached, timeout=20_000) as blocker:
        manager.launch(spec)
    entry = blocker.args[0]
    shot = subprocess.run(
        [sys.executable, "-m", "loom_desktop", "--screenshot", str(tmp_path / "shot.png")],
        cwd=ROOT,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.returncode == 0, shot.stderr
    assert entry.proxy.running and entry in manager.proxies
    assert read_sidecar(entry.info["exchanges"]).end is None  # nobody stopped it
    manager.stop()
    end = read_sidecar(entry.info["exchanges"]).end
    assert end is not None and end["stopped_by"]["pid"] == os.getpid()  # its owner did


def test_a_proxy_is_taken_over_only_once_its_app_is_gone(
    qtbot, window: MainWindow, runtime: Path, tmp_path: Path
) -> None:
    folder = proxies_dir()
    folder.mkdir(parents=True, exist_ok=True)
    owner = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=-1)
    ready = folder / "p.ready.json"
    meta = {"dialect": "anthropic", "confirm_timeout": 30, "owner": owner.pid}
    (folder / "p.app.json").write_text(json.dumps({**meta, "owner_start": started(owner.pid)}))
    try:
        with ready_proxy(ready, tmp_path / "p.loom.json") as proxy:
            assert window.proxy_manager.reattach() == []  # its app still runs
            owner.communicate(b"", timeout=10)  # that app ends
            [entry] = window.proxy_manager.reattach()
            assert entry.proxy.pid == proxy.pid
            assert json.loads((folder / "p.app.json").read_text())["owner"] == os.getpid()
            window.close()  # the new owner stops it
            assert proxy.wait(15) == 0
    finally:
        if owner.poll() is None:
            owner.kill()
        owner.wait(10)
