"""One window per user: later launches hand their files to it; crashed ones do not block it.

The running instance is this test process (pytest-qt's ``LoomApplication``) or a
real ``python -m loom_desktop`` subprocess; later launches are always real
subprocesses. Every test uses its own server name (``$LOOM_DESKTOP_INSTANCE``).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QDir
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from loom_desktop.__main__ import start_gui
from loom_desktop.app import LoomApplication
from loom_desktop.infra.single_instance import (
    ENV_NAME,
    InstanceServer,
    claim,
    decode,
    encode,
    hand_over,
    server_name,
)

LAUNCH_TIMEOUT = 60  # seconds for one launch of a real process


@pytest.fixture
def name(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    value = f"loom-test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv(ENV_NAME, value)
    yield value
    QLocalServer.removeServer(value)  # whatever a killed process left behind


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", **extra}


def _launch(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "loom_desktop", *args],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _connects(name: str) -> bool:
    probe = QLocalSocket()
    probe.connectToServer(name)
    ok = probe.waitForConnected(200)
    probe.abort()
    return ok


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def test_server_name_is_per_user_and_overridable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_NAME, raising=False)
    default = server_name()
    assert default.startswith("loom-desktop-")
    if hasattr(os, "getuid"):
        assert default.endswith(str(os.getuid()))
    monkeypatch.setenv(ENV_NAME, "elsewhere")
    assert server_name() == "elsewhere"


def test_message_round_trip_and_rejects_garbage() -> None:
    assert decode(encode(["/a b/ü.loom.json"], "tok").rstrip(b"\n")) == (
        ["/a b/ü.loom.json"],
        "tok",
    )
    assert decode(encode([])) == ([], None)
    for bad in (b"[1, 2]", b'{"paths": "x"}', b'{"paths": [1]}', b"not json"):
        with pytest.raises(ValueError):
            decode(bad)


def test_second_launch_hands_over_and_the_window_gains_the_tab(
    qtbot, qapp: LoomApplication, name: str, sample: Path, tmp_path: Path
) -> None:
    server = claim(name, [])
    assert isinstance(server, InstanceServer) and server.is_listening()
    running = start_gui(qapp, [str(sample)], server)
    qtbot.addWidget(running.window)
    try:
        window = running.window
        qtbot.waitUntil(lambda: window.tabs.count() == 1, timeout=10_000)
        shutil.copy(sample, tmp_path / "second.loom.json")
        with qtbot.waitSignal(qapp.raise_requested, timeout=LAUNCH_TIMEOUT * 1000):
            proc = _launch("second.loom.json", cwd=tmp_path)  # relative: made absolute
            qtbot.waitUntil(lambda: proc.poll() is not None, timeout=LAUNCH_TIMEOUT * 1000)
        _out, err = proc.communicate()
        assert proc.returncode == 0, err
        assert window.tabs.count() == 2
        assert window.tabs.tabText(1) == "second.loom.json"
        assert window.tabs.tabToolTip(1) == str(tmp_path / "second.loom.json")
        assert window.tabs.currentIndex() == 1 and window.isVisible()
        qtbot.waitUntil(lambda: all(v.complete for v in window.documents()), timeout=20_000)
    finally:
        running.close()
    assert not _connects(name), "closing the running instance stops its server"


def test_screenshot_never_hands_over(
    qtbot, qapp: LoomApplication, name: str, sample: Path, tmp_path: Path
) -> None:
    server = claim(name, [])
    assert isinstance(server, InstanceServer)
    received: list[list[str]] = []
    server.paths_received.connect(lambda paths, _token: received.append(paths))
    try:
        proc = _launch(str(sample), "--screenshot", str(tmp_path / "shot.png"), cwd=tmp_path)
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=LAUNCH_TIMEOUT * 1000)
        _out, err = proc.communicate()
        assert proc.returncode == 0, err
        assert (tmp_path / "shot.png").stat().st_size > 10_000
        assert received == []
    finally:
        server.close()


def test_screenshot_never_becomes_the_server(name: str, sample: Path, tmp_path: Path) -> None:
    proc = _launch(str(sample), "--screenshot", str(tmp_path / "shot.png"), cwd=tmp_path)
    try:
        deadline = time.monotonic() + LAUNCH_TIMEOUT
        while proc.poll() is None and time.monotonic() < deadline:
            assert not _connects(name), "a --screenshot process is serving the instance name"
            time.sleep(0.05)
    finally:
        _stop(proc)
    assert proc.returncode == 0


def test_stale_socket_of_a_crashed_instance_is_replaced(name: str) -> None:
    path = os.path.join(QDir.tempPath(), name)
    if os.name != "posix":
        pytest.skip("stale socket files exist only where local servers are files")
    crashed = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    crashed.bind(path)  # bound, never listening, then gone: what a SIGKILL leaves
    crashed.close()
    assert os.path.exists(path) and hand_over(name, []) is False
    server = claim(name, [])
    assert isinstance(server, InstanceServer)
    try:
        assert server.is_listening() and _connects(name)
    finally:
        server.close()


def test_killed_instance_is_replaced_by_the_next_launch(name: str, tmp_path: Path) -> None:
    first = _launch(cwd=tmp_path)
    try:
        deadline = time.monotonic() + LAUNCH_TIMEOUT
        while not _connects(name):
            assert first.poll() is None and time.monotonic() < deadline, first.stderr
            time.sleep(0.1)
        second = _launch("x.loom.json", cwd=tmp_path)
        assert second.wait(timeout=LAUNCH_TIMEOUT) == 0, second.communicate()[1]
        second.communicate()
        assert first.poll() is None, "the first instance keeps running"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=20)
    finally:
        _stop(first)
    server = claim(name, [])
    assert isinstance(server, InstanceServer)
    try:
        assert server.is_listening()
    finally:
        server.close()


def test_silent_instance_is_left_alone(name: str) -> None:
    """Someone holds the name but never answers: run alone, do not steal the socket."""
    silent = QLocalServer()
    assert silent.listen(name)
    try:
        assert hand_over(name, ["/x.loom.json"], answer_ms=300) is None
        assert silent.isListening()
    finally:
        silent.close()
