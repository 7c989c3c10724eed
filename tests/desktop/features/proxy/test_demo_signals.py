"""The signals a terminal or a job manager sends to the app's process group spare the demo.

Why: a demo's proxy was stopped under its owner while a call was held and the agent died
with "Server disconnected without sending a response". The app (a process of its own,
started as ``loom-desktop`` starts it) runs in its own process group under a stand-in
for a shell: a session leader that waits for it, so the group is not orphaned and
Ctrl-Z's SIGTSTP really stops it. The test then signals that group as a terminal does.
Job control (stop, continue, resize) leaves the proxy and the agent running, and the
demo finishes when its call is approved. A quit signal (Ctrl-C, kill, hang-up, Ctrl-\\)
closes the window as its close button does: the held call is denied with a reason, the
agent ends normally, the proxy is stopped by its owner (the app: its end record says
so) and no process is left.
"""

from __future__ import annotations

import json
import os
import pty
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loom_core.proxy.config import SessionPaths
from loom_core.proxy.sidecar import read_sidecar
from tests.core.clis import ROOT

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and job control")
WAIT_S = 90.0  # bounds a hung app; a run takes seconds
SHELL = (  # the stand-in for a shell: runs the app as a job in a group of its own
    "import subprocess, sys\n"
    "app = subprocess.Popen([sys.executable, '-m', 'tests.desktop.features.proxy.demo_app'],"
    " process_group=0)\n"
    "sys.exit(app.wait())\n"
)


class App:
    """The app under the stand-in shell; its JSON lines arrive on a queue."""

    def __init__(self, tmp: Path, tty: int | None = None) -> None:
        """``tty``: a terminal's fd for the app's stderr (else a file the test reads)."""
        env = {**os.environ, "LOOM_RUNTIME_DIR": str(tmp / "rt"), "PYTHONUNBUFFERED": "1"}
        self.stderr = tmp / "app.stderr"
        self._err = open(self.stderr, "wb")  # noqa: SIM115 - closed in close()
        self.shell = subprocess.Popen(
            [sys.executable, "-c", SHELL],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err if tty is None else tty,
            text=True,
            start_new_session=True,  # the shell leads a session, as a terminal's does
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.shell.stdout is not None
        for line in self.shell.stdout:
            if line.startswith("{"):
                self.lines.put(json.loads(line))

    def next(self, event: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                item = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                err = self.stderr.read_text(errors="replace")[-3000:]
                raise AssertionError(f"no {event!r} from the app in {WAIT_S:g} s:\n{err}") from None
            if item["event"] == event:
                return item

    def send(self, line: str) -> None:
        assert self.shell.stdin is not None
        self.shell.stdin.write(line + "\n")
        self.shell.stdin.flush()

    def close(self) -> None:
        """Whatever happened: nothing this test started is left running."""
        try:
            os.killpg(self.shell.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.shell.wait(30)
        for stream in (self.shell.stdin, self.shell.stdout, self._err):
            if stream is not None:
                stream.close()
        self._reader.join(10)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    running = App(tmp_path)
    try:
        yield running
    finally:
        running.close()


def state(pid: int) -> str:
    """The process's state letter from /proc (T: stopped), or "gone"."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "gone"
    return stat.rsplit(")", 1)[1].split()[0]


def wait_state(pid: int, wanted: set[str]) -> str:
    deadline = time.monotonic() + WAIT_S
    while (now := state(pid)) not in wanted:
        assert time.monotonic() < deadline, f"pid {pid} stayed {now!r}"
        time.sleep(0.02)
    return now


def gone(pid: int) -> bool:
    return state(pid) in ("gone", "Z")


def test_job_control_signals_leave_the_demo_running(app: App) -> None:
    held = app.next("held")
    group = os.getpgid(held["app"])
    children = (held["proxy"], held["agent"])
    assert group == held["app"] and all(os.getpgid(c) != group for c in children)
    assert all(os.getsid(c) == c for c in children)  # each leads a session of its own
    for stop in (signal.SIGTSTP, signal.SIGTTOU, signal.SIGTTIN):  # Ctrl-Z, tty output/input
        os.killpg(group, stop)
        wait_state(held["app"], {"T"})
        assert all(state(c) not in ("T", "gone", "Z") for c in children)  # not stopped
        os.killpg(group, signal.SIGCONT)  # fg / bg
        wait_state(held["app"], {"R", "S", "D"})
    os.killpg(group, signal.SIGWINCH)  # the terminal was resized
    app.send("approve")
    finished = app.next("finished")
    assert finished["code"] == 0, finished["output"]
    assert "agent: running deploy" in "\n".join(finished["output"])
    assert app.next("exited")["code"] == 0
    assert app.shell.wait(WAIT_S) == 0
    end = read_sidecar(SessionPaths.of(held["save"]).exchanges).end
    assert end is not None and end["stopped_by"]["pid"] == held["app"]  # its owner
    assert all(gone(c) for c in children)


@pytest.mark.parametrize(
    "sig",
    [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT],
    ids=["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"],
)
def test_a_quit_signal_closes_the_app_and_the_demo_ends_as_it_should(
    app: App, sig: signal.Signals
) -> None:
    held = app.next("held")
    os.killpg(os.getpgid(held["app"]), sig)
    finished = app.next("finished")
    output = "\n".join(finished["output"])
    assert "denied by the operator (reason: the proxy was stopped)" in output
    assert "agent: done" in output and "APIConnectionError" not in output
    assert app.shell.wait(WAIT_S) == 0
    sidecar = read_sidecar(SessionPaths.of(held["save"]).exchanges)
    assert sidecar.end is not None
    assert sidecar.end["stopped_by"] == {**sidecar.end["stopped_by"], "pid": held["app"]}
    assert sidecar.end["stopped_by"]["signal"] == "SIGTERM"  # sent by the app, not the group
    assert all(gone(pid) for pid in (held["proxy"], held["agent"]))


def test_a_hang_up_closes_the_app_when_its_terminal_is_gone(tmp_path: Path) -> None:
    """Closing the terminal that ran the app: its shell resends the hang-up to the app,
    whose stderr is now a hung-up tty where every write fails. The app still closes as
    its close button does (it once raised on its "closing" notice and lived on, deaf to
    every later quit signal, with its proxy and the demo's agent)."""
    terminal, tty = pty.openpty()
    app = App(tmp_path, tty)
    os.close(tty)
    try:
        held = app.next("held")
        os.close(terminal)  # the terminal window was closed: writes to the tty now fail
        os.killpg(os.getpgid(held["app"]), signal.SIGHUP)
        output = "\n".join(app.next("finished")["output"])
        assert "denied by the operator (reason: the proxy was stopped)" in output
        assert app.shell.wait(WAIT_S) == 0
        assert all(gone(pid) for pid in (held["proxy"], held["agent"]))
    finally:
        app.close()
