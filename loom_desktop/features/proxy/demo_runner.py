"""Help ▸ Run offline demo: fake model + real proxy with a confirm rule + scripted agent.

:class:`DemoRun` owns all three: the bundled fake model
(:class:`loom_core.demo.FakeModelServer`, a thread), the proxy (started through the
window's :class:`~loom_desktop.features.proxy.manager.ProxyManager`, so the live tab and the
approvals panel come with it) and the agent (``python -m loom_core.demo.agent``, a
QProcess). The agent's third call (``deploy``) is held; it continues once the user
clicks Approve or Deny. When the agent exits, or :meth:`stop` is called, or the
window closes, everything is stopped and the trace finalized (the tab stays).

Nothing ends silently: the agent's stdout and stderr go to the demo's output panel
(:class:`~loom_desktop.features.proxy.demo_panel.DemoOutputDock`), and an agent that fails (an exit
status other than 0, or killed by a signal) is reported in the panel, in a dialog
with its last lines, to the live tab, which then says "failed" instead of running
forever, and to the run library, which lists the run as failed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal

from loom_core.demo import CONFIRM_PATTERN, FakeModelServer
from loom_core.runs_dir import free_path, runs_dir
from loom_desktop.document.view import DocumentView
from loom_desktop.features.proxy.demo_panel import DemoOutputDock
from loom_desktop.features.proxy.launcher import ProxySpec
from loom_desktop.infra.child import module_command
from loom_desktop.infra.sessions import own_session

TAIL_LINES = 12  # of the agent's output, in the failure dialog
AGENT_GRACE_MS = 5000  # a stopped demo's agent, answered, ends by itself within this


class DemoRun(QObject):
    """``line(str)`` for each line the agent prints; ``finished(code)`` once all is stopped."""

    line = Signal(str)
    finished = Signal(int)

    def __init__(self, window: Any, pace: float = 1.0, folder: str | Path | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.pace = pace
        # the per-user runs folder, where generated runs go: listed on the Runs page, and
        # "demo-2.journal.jsonl" as a second demo's tab title, not a temp folder's name
        self.folder = Path(folder) if folder else runs_dir()
        self.folder.mkdir(parents=True, exist_ok=True)
        self._save = free_path(self.folder, "demo")
        self.model = FakeModelServer()
        self.proxy: Any = None
        self.agent: QProcess | None = None
        self.output: list[str] = []
        self.done = False
        self.exit_code: int | None = None
        self.failure: str | None = None  # how the agent failed, in words
        self.view: DocumentView | None = None  # the live tab of the demo's proxy
        self._partial = {"stdout": b"", "stderr": b""}
        self.panel = self._panel()

    @property
    def save(self) -> Path:
        return self._save

    def _panel(self) -> DemoOutputDock:
        """The window's demo output panel (one for all runs), emptied for this run."""
        panel = getattr(self.window, "demo_panel", None)
        if panel is None:
            panel = self.window.demo_panel = DemoOutputDock(self.window)
        panel.clear()
        panel.show_state("demo: starting…")
        panel.place(self.window)
        return panel

    def start(self) -> None:
        url = self.model.start()
        manager = self.window.proxy_manager
        manager.attached.connect(self._attached)
        manager.failed.connect(self._proxy_failed)
        spec = ProxySpec(
            target=url, save=str(self.save), confirm=[CONFIRM_PATTERN], confirm_timeout=120
        )
        self.proxy = manager.launch(spec)
        self._say(f"demo: fake model on {url}; starting a proxy that holds {CONFIRM_PATTERN}")

    def _attached(self, entry: Any) -> None:
        if entry.proxy is not self.proxy or self.agent is not None:
            return
        self.view = entry.view
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("ANTHROPIC_BASE_URL", str(entry.info["url"]))
        env.insert("PYTHONUNBUFFERED", "1")
        proc.setProcessEnvironment(env)
        program, arguments = module_command("loom_core.demo.agent", "--pace", f"{self.pace:g}")
        proc.setProgram(program)
        proc.setArguments(arguments)
        proc.setWorkingDirectory(str(self.folder))
        own_session(proc)  # a signal to the app's group must not end the agent under us
        proc.readyReadStandardOutput.connect(lambda: self._read("stdout"))
        proc.readyReadStandardError.connect(lambda: self._read("stderr"))
        proc.finished.connect(self._agent_done)
        proc.errorOccurred.connect(self._agent_error)
        self.agent = proc
        proc.start()
        self.panel.show_state("demo: the agent is running")
        self._say("demo: agent started — approve or deny its deploy in the Approvals panel")

    def _read(self, channel: str, flush: bool = False) -> None:
        """Complete lines of one channel (a partial line waits for its end, or the exit)."""
        if self.agent is None:
            return
        chunk = (
            self.agent.readAllStandardOutput()
            if channel == "stdout"
            else self.agent.readAllStandardError()
        )
        data = self._partial[channel] + bytes(chunk.data())
        lines = data.split(b"\n")
        self._partial[channel] = b"" if flush else lines.pop()
        for raw in lines:
            text = raw.decode("utf-8", "replace").rstrip()
            if text.strip():
                self._say(text, channel)

    def _say(self, text: str, channel: str = "demo") -> None:
        self.output.append(text)
        self.panel.add(channel, text)
        self.line.emit(text)
        self.window.show_status(text, 20_000)

    def _agent_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart and not self.done:
            self.failure = f"could not start ({self.agent.errorString() if self.agent else error})"
            self._failed(-1)

    def _agent_done(self, code: int, status: QProcess.ExitStatus) -> None:
        self._read("stdout", flush=True)
        self._read("stderr", flush=True)
        if self.done:
            return  # stopped by us: not the agent's failure
        if status == QProcess.ExitStatus.CrashExit:
            self.failure = f"was killed by signal {code}"
        elif code != 0:
            self.failure = f"exited with status {code}"
        if self.failure is not None:
            self._failed(code)
            return
        self._say(f"demo: agent exited (0); trace saved to {self.save}")
        self.panel.show_state(
            f"demo: finished — the agent exited with status 0; trace saved to {self.save}"
        )
        self._finish(code)

    def _failed(self, code: int) -> None:
        """Say it everywhere it can be seen, then stop the rest; the tab learns why."""
        message = f"The demo's agent {self.failure}."
        self._say(f"demo: {message} Trace so far: {self.save}")
        self.panel.show_state(
            f"demo: FAILED — the agent {self.failure}; its output is below", failed=True
        )
        self._finish(code)
        self.window.note_run(str(self.save), "recorded", error=f"the demo's agent {self.failure}")
        if self.view is not None and getattr(self.view, "live", None) is not None:
            self.view.live.writer_stopped(f"the demo's agent {self.failure}", failed=True)
        tail = "\n".join(self.output[-TAIL_LINES:])
        box = self.window.report_error("The demo failed", message, details=tail)
        box.setInformativeText("Its last lines:\n" + tail)

    def _proxy_failed(self, message: str) -> None:
        if self.proxy is not None and self.proxy.info is None and not self.done:
            self.panel.show_state(
                f"demo: FAILED — the proxy could not start: {message}", failed=True
            )
            self._finish(-1)

    def stop(self) -> None:
        """Stop the agent, the proxy and the fake model (idempotent)."""
        if not self.done:
            self.panel.show_state("demo: stopped")
        self._finish(self.exit_code if self.exit_code is not None else -1)

    def _finish(self, code: int) -> None:
        if self.done:
            return
        self.done = True
        self.exit_code = code
        manager = self.window.proxy_manager
        for signal, slot in (
            (manager.attached, self._attached),
            (manager.failed, self._proxy_failed),
        ):
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):
                pass
        if self.proxy is not None:  # first: it denies a held call, so the agent gets an
            manager.stop(self.proxy)  # answer and ends by itself
        agent = self.agent
        if agent is not None and agent.state() != QProcess.ProcessState.NotRunning:
            if not agent.waitForFinished(AGENT_GRACE_MS):
                agent.terminate()
                if not agent.waitForFinished(5000):
                    agent.kill()
                    agent.waitForFinished(3000)
        self.model.stop()
        self.finished.emit(code)

    @property
    def running(self) -> bool:
        agent = self.agent is not None and self.agent.state() != QProcess.ProcessState.NotRunning
        proxy = self.proxy is not None and self.proxy.running
        return agent or proxy or self.model.running
