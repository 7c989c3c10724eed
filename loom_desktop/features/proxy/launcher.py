"""Proxies the app starts itself: the ``python -m loom_core proxy`` child process.

:class:`ProxySpec` is what Proxy ▸ Start… collects, turned into the proxy's flags
by :meth:`ProxySpec.args`. :class:`ProxyProcess` owns one proxy: a
:class:`QProcess` (or, after a restart of the app, just the pid of a proxy
found again), the ready file the proxy writes once listening, and the stop
(SIGTERM, so the proxy finalizes its trace). Ready files live under
``<config dir>/proxies/`` so the next start of the app can re-attach the ones
whose process is still alive (:func:`remembered_proxies`) and forget the rest.
:class:`ProxyManager` ties them to the main window: live tab, approvals panel,
the ``export …_BASE_URL`` line(s), errors.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

from loom_desktop.infra.child import module_command
from loom_desktop.infra.sessions import own_session
from loom_desktop.infra.settings import config_dir

READY_POLL_MS = 50
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_MS = 15_000
TARGETS = {"Anthropic": "https://api.anthropic.com", "OpenAI": "https://api.openai.com"}


@dataclass
class ProxySpec:
    """The flags of one proxy to start (see ``loom_core.proxy.config.add_proxy_flags``)."""

    target: str = TARGETS["Anthropic"]
    save: str = "session.loom.json"
    port: int = 0
    profiles: list[str] = field(default_factory=list)
    policies: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    confirm: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)  # --rule: "after …: …" / "taint …: …"
    default: str | None = None  # --shield-default; None = not given
    confirm_timeout: float = 300.0
    dialect: str = "anthropic"  # which export line to show: anthropic | openai | "" (both)
    force: bool = False  # the user confirmed replacing an existing trace at ``save``
    otlp_endpoint: str = ""  # --otlp-endpoint: also send GenAI spans to this collector
    otlp_content: bool = False  # --otlp-content
    # the team library to publish the trace to once the proxy stopped ("": none); the app
    # publishes it, not the proxy: see loom_desktop.features.proxy.publish_at_stop
    publish: str = ""

    def args(self, ready_file: str) -> list[str]:
        out = [
            "proxy",
            "--port",
            str(self.port),
            "--target",
            self.target,
            "--save",
            str(Path(self.save).expanduser().absolute()),
            "--ready-file",
            ready_file,
            "--confirm-timeout",
            f"{self.confirm_timeout:g}",
        ]
        for flag, values in (
            ("--profile", self.profiles),
            ("--policy", self.policies),
            ("--deny", self.deny),
            ("--allow", self.allow),
            ("--confirm", self.confirm),
            ("--rule", self.rules),
        ):
            for v in values:
                out += [flag, v]
        if self.default:
            out += ["--shield-default", self.default]
        if self.force:
            out.append("--force")
        if self.otlp_endpoint:
            out += ["--otlp-endpoint", self.otlp_endpoint]
            out += ["--otlp-content"] if self.otlp_content else []
        return out


def proxies_dir() -> Path:
    return config_dir() / "proxies"


def pid_alive(pid: int) -> bool:
    """True when ``pid`` is a live process (and, where /proc tells, a loom proxy)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.parent.exists():
        try:
            raw = cmdline.read_bytes()
        except OSError:
            return False
        if not raw:  # a zombie: exited, not yet reaped
            return False
        return b"loom_core" in raw and b"proxy" in raw
    return True


def remembered_proxies() -> list[tuple[Path, dict[str, Any]]]:
    """Ready files of proxies this app started whose process is alive; forgets the rest."""
    alive: list[tuple[Path, dict[str, Any]]] = []
    folder = proxies_dir()
    if not folder.is_dir():
        return alive
    for path in sorted(folder.glob("*.ready.json")):
        try:
            info = json.loads(path.read_text())
            pid = int(info["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if pid_alive(pid):
            alive.append((path, info))
        else:
            path.unlink(missing_ok=True)  # crashed or killed: nothing to re-attach
    return alive


class ProxyProcess(QObject):
    """One proxy the app owns. Emits ``ready(info)`` once listening, ``failed(message)``
    when it could not start, ``stopped(exit_code)`` when it is gone."""

    ready = Signal(object)
    failed = Signal(str)
    stopped = Signal(int)

    def __init__(
        self,
        spec: ProxySpec | None = None,
        parent: QObject | None = None,
        ready_file: Path | None = None,
        info: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(parent)
        self.spec = spec
        self.ready_file = ready_file or proxies_dir() / f"{uuid.uuid4().hex}.ready.json"
        self.info: dict[str, Any] | None = info  # the ready file's content, once known
        self.process: QProcess | None = None
        self.stderr = ""
        self._deadline = 0.0
        self._timer = QTimer(self, interval=READY_POLL_MS)
        self._timer.timeout.connect(self._check_ready)

    @classmethod
    def adopt(
        cls, ready_file: Path, info: dict[str, Any], parent: QObject | None = None
    ) -> ProxyProcess:
        """A proxy started by a previous run of the app (no QProcess; stopped by pid)."""
        return cls(None, parent, ready_file, info)

    @property
    def pid(self) -> int | None:
        if self.process is not None:
            pid = self.process.processId()
            return int(pid) if pid else None
        return int(self.info["pid"]) if self.info else None

    @property
    def running(self) -> bool:
        if self.process is not None:
            return self.process.state() != QProcess.ProcessState.NotRunning
        return self.info is not None and pid_alive(int(self.info["pid"]))

    def start(self) -> None:
        assert self.spec is not None
        self.ready_file.parent.mkdir(parents=True, exist_ok=True)
        self.ready_file.unlink(missing_ok=True)
        save = Path(self.spec.save).expanduser().absolute()
        save.parent.mkdir(parents=True, exist_ok=True)
        proc = QProcess(self)
        program, arguments = module_command("loom_core", *self.spec.args(str(self.ready_file)))
        proc.setProgram(program)
        proc.setArguments(arguments)
        proc.setWorkingDirectory(str(save.parent))
        proc.setStandardOutputFile(QProcess.nullDevice())
        own_session(proc)  # only its owner stops it, not a signal to the app's group
        proc.finished.connect(self._finished)
        proc.errorOccurred.connect(self._error)
        self.process = proc
        self._deadline = time.monotonic() + READY_TIMEOUT_S
        proc.start()
        self._timer.start()

    def _check_ready(self) -> None:
        try:
            info = json.loads(self.ready_file.read_text())
        except (OSError, ValueError):
            if time.monotonic() > self._deadline:
                self._timer.stop()
                self.failed.emit(f"the proxy did not start listening within {READY_TIMEOUT_S:g} s")
                self.stop()
            return
        self._timer.stop()
        self.info = info
        self.ready.emit(info)

    def _read_stderr(self) -> None:
        if self.process is not None:
            self.stderr += bytes(self.process.readAllStandardError().data()).decode(
                "utf-8", "replace"
            )

    def _error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._timer.stop()
            self.failed.emit(
                f"cannot run {module_command('loom_core')[0]}: "
                f"{self.process.errorString() if self.process else error}"
            )

    def _finished(self, code: int, _status: QProcess.ExitStatus) -> None:
        self._timer.stop()
        self._read_stderr()
        if self.info is None and code != 0:
            lines = [ln for ln in self.stderr.splitlines() if ln.strip()]
            cause = lines[-1] if lines else f"the proxy exited with status {code}"
            self.failed.emit(cause.removeprefix("error: "))
        self.stopped.emit(code)

    def stop(self) -> None:
        """SIGTERM (the proxy finalizes its trace), wait, then kill if it hangs."""
        self._timer.stop()
        proc = self.process
        if proc is not None:
            if proc.state() != QProcess.ProcessState.NotRunning:
                proc.terminate()  # SIGTERM on Unix
                if not proc.waitForFinished(STOP_TIMEOUT_MS):
                    proc.kill()
                    proc.waitForFinished(3000)
            return
        if self.info is not None:  # adopted: not our child, so poll until it is gone
            pid = int(self.info["pid"])
            if pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + STOP_TIMEOUT_MS / 1000
                while pid_alive(pid) and time.monotonic() < deadline:
                    time.sleep(0.05)
            self.ready_file.unlink(missing_ok=True)
            self.stopped.emit(0)
