"""Help ▸ Run offline demo: fake model + real proxy with a confirm rule + scripted agent.

:class:`DemoRun` owns all three: the bundled fake model
(:class:`loom_core.demo.FakeModelServer`, a thread), the proxy (started through the
window's :class:`~loom_desktop.proxy_manager.ProxyManager`, so the live tab and the
approvals panel come with it) and the agent (``python -m loom_core.demo.agent``, a
QProcess). The agent's third call (``deploy``) is held; it continues once the user
clicks Approve or Deny. When the agent exits, or :meth:`stop` is called, or the
window closes, everything is stopped and the trace finalized (the tab stays).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal

from loom_core.demo import CONFIRM_PATTERN, FakeModelServer

from .child import module_command
from .proxy_launcher import ProxySpec


class DemoRun(QObject):
    """``line(str)`` for each line the agent prints; ``finished(code)`` once all is stopped."""

    line = Signal(str)
    finished = Signal(int)

    def __init__(self, window: Any, pace: float = 1.0, folder: str | Path | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.pace = pace
        self.folder = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="loom-demo-"))
        self.model = FakeModelServer()
        self.proxy: Any = None
        self.agent: QProcess | None = None
        self.output: list[str] = []
        self.done = False
        self.exit_code: int | None = None

    @property
    def save(self) -> Path:
        return self.folder / "demo.loom.json"

    def start(self) -> None:
        url = self.model.start()
        manager = self.window.proxy_manager
        manager.attached.connect(self._attached)
        manager.failed.connect(self._proxy_failed)
        spec = ProxySpec(target=url, save=str(self.save), confirm=[CONFIRM_PATTERN],
                         confirm_timeout=120)
        self.proxy = manager.launch(spec)
        self._say(f"demo: fake model on {url}; starting a proxy that holds {CONFIRM_PATTERN}")

    def _attached(self, entry: Any) -> None:
        if entry.proxy is not self.proxy or self.agent is not None:
            return
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("ANTHROPIC_BASE_URL", str(entry.info["url"]))
        env.insert("PYTHONUNBUFFERED", "1")
        proc.setProcessEnvironment(env)
        program, arguments = module_command("loom_core.demo.agent", "--pace", f"{self.pace:g}")
        proc.setProgram(program)
        proc.setArguments(arguments)
        proc.setWorkingDirectory(str(self.folder))
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        proc.readyReadStandardOutput.connect(self._read)
        proc.finished.connect(lambda code, _s: self._agent_done(code))
        self.agent = proc
        proc.start()
        self._say("demo: agent started — approve or deny its deploy in the Approvals panel")

    def _read(self) -> None:
        if self.agent is None:
            return
        data = bytes(self.agent.readAllStandardOutput().data()).decode("utf-8", "replace")
        for text in data.splitlines():
            if text.strip():
                self._say(text)

    def _say(self, text: str) -> None:
        self.output.append(text)
        self.line.emit(text)
        self.window.statusBar().showMessage(text, 20_000)

    def _agent_done(self, code: int) -> None:
        self._read()
        self._say(f"demo: agent exited ({code}); trace saved to {self.save}")
        self._finish(code)

    def _proxy_failed(self, message: str) -> None:
        if self.proxy is not None and self.proxy.info is None and not self.done:
            self._finish(-1)

    def stop(self) -> None:
        """Stop the agent, the proxy and the fake model (idempotent)."""
        self._finish(self.exit_code if self.exit_code is not None else -1)

    def _finish(self, code: int) -> None:
        if self.done:
            return
        self.done = True
        self.exit_code = code
        manager = self.window.proxy_manager
        for signal, slot in ((manager.attached, self._attached), (manager.failed, self._proxy_failed)):
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):
                pass
        agent = self.agent
        if agent is not None and agent.state() != QProcess.ProcessState.NotRunning:
            agent.terminate()
            if not agent.waitForFinished(5000):
                agent.kill()
                agent.waitForFinished(3000)
        if self.proxy is not None:
            manager.stop(self.proxy)
        self.model.stop()
        self.finished.emit(code)

    @property
    def running(self) -> bool:
        agent = self.agent is not None and self.agent.state() != QProcess.ProcessState.NotRunning
        proxy = self.proxy is not None and self.proxy.running
        return agent or proxy or self.model.running
