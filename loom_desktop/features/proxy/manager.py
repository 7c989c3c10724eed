"""The proxies the main window started (or found again): Proxy ▸ Start…, Stop, Re-attach.

For each proxy: a live tab on its journal, an approvals panel on its control
plane, and a small dock with the ``export …_BASE_URL=…`` line, a Copy button and
a Stop button. Everything is stopped when the window closes (SIGTERM, so the
trace is finalized). A proxy that could not start is reported in an error dialog
naming the cause (the proxy's own stderr line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from loom_desktop.document.view import DocumentView
from loom_desktop.features.proxy.approvals_panel import ApprovalsPanel
from loom_desktop.features.proxy.launcher import (
    ProxyProcess,
    ProxySpec,
    export_line,
    proxies_dir,
    remembered_proxies,
)
from loom_desktop.features.proxy.ownership import (
    meta_path,
    orphan_metas,
    owned_by_a_live_app,
    read_meta,
    write_meta,
)


class ProxyInfoDock(QDockWidget):
    """The export line with a Copy button, where the trace goes, and Stop."""

    def __init__(self, info: dict[str, Any], dialect: str, parent: QWidget | None = None) -> None:
        super().__init__(f"Proxy {info['host']}:{info['port']}", parent)
        self.setObjectName(f"proxy-{info['port']}")
        self.line = export_line(str(info["url"]), dialect)
        body = QWidget()
        lay = QVBoxLayout(body)
        self.export_label = QLabel(self.line)
        self.export_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_label.setStyleSheet("font-family: monospace;")
        self.copy_btn = QPushButton("Copy")
        self.copy_btn.clicked.connect(self.copy)
        self.stop_btn = QPushButton("Stop proxy")
        row = QHBoxLayout()
        row.addWidget(self.export_label, 1)
        row.addWidget(self.copy_btn)
        row.addWidget(self.stop_btn)
        lay.addLayout(row)
        self.where = QLabel(f"→ {info.get('target')}   recording to {info.get('save')}")
        self.where.setWordWrap(True)
        lay.addWidget(self.where)
        self.setWidget(body)

    def copy(self) -> None:
        QApplication.clipboard().setText(self.line)


@dataclass
class Attached:
    proxy: ProxyProcess
    info: dict[str, Any]
    panel: ApprovalsPanel | None = None
    dock: ProxyInfoDock | None = None
    view: DocumentView | None = None  # the live tab


class ProxyManager(QObject):
    """Owned by :class:`MainWindow`; ``attached(Attached)`` / ``failed(str)`` for tests."""

    attached = Signal(object)
    failed = Signal(str)

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.proxies: list[Attached] = []
        self.pending: list[ProxyProcess] = []  # started, not listening yet
        self.dialog: Any = None
        self.last_spec: ProxySpec | None = None  # what Start last started (a cancel keeps none)

    # -- starting --------------------------------------------------------------------
    def start_dialog(self) -> Any:
        """Proxy ▸ Start…: the dialog (non-modal); Start launches the proxy."""
        from loom_desktop.features.proxy.start_dialog import StartProxyDialog

        dialog = StartProxyDialog(self.window, self.last_spec)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda d=dialog: self._accepted(d.spec()))
        self.dialog = dialog
        dialog.open()
        return dialog

    def _accepted(self, spec: ProxySpec) -> None:
        self.last_spec = spec
        self.launch(spec)

    def launch(self, spec: ProxySpec) -> ProxyProcess:
        proxy = ProxyProcess(spec, self)
        proxy.ready.connect(lambda info, p=proxy: self._ready(p, info))
        proxy.failed.connect(lambda msg, p=proxy: self._failed(p, msg))
        self.pending.append(proxy)
        proxy.start()
        return proxy

    def _ready(self, proxy: ProxyProcess, info: dict[str, Any]) -> None:
        if proxy in self.pending:
            self.pending.remove(proxy)
        spec = proxy.spec
        meta = {"dialect": spec.dialect, "confirm_timeout": spec.confirm_timeout} if spec else {}
        write_meta(proxy.ready_file, meta)  # this app owns it: no other window takes it over
        self._attach(proxy, info, meta)

    def _attach(self, proxy: ProxyProcess, info: dict[str, Any], meta: dict[str, Any]) -> Attached:
        win = self.window
        entry = Attached(proxy, info)
        if info.get("save"):  # the Runs page lists the recording as running, then done
            save = str(info["save"])
            win.note_run(save, "recording")
            proxy.stopped.connect(lambda _code, s=save: win.note_run(s, "recorded"))
        if info.get("journal"):
            entry.view = view = win.open_path(info["journal"])
            live = getattr(view, "live", None)
            if live is not None:  # its writer is this proxy, running
                live.writer_running()
            proxy.stopped.connect(
                lambda code, v=view: _writer_gone(
                    v, f"the proxy that wrote it stopped (exit status {code})"
                )
            )
        if info.get("token_file"):  # a shield is active: there is a control plane
            entry.panel = win.attach_proxy(int(info["port"]), meta.get("confirm_timeout"))
            if entry.view is not None:
                entry.panel.link_run(entry.view)
        dialect = meta.get("dialect") or (
            "openai" if "openai" in str(info.get("target")) else "anthropic"
        )
        entry.dock = ProxyInfoDock(info, dialect, win)
        entry.dock.stop_btn.clicked.connect(lambda _c=False, p=proxy: self.stop(p))
        win.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, entry.dock)
        win.show_status(f"proxy listening on {info['url']}: {entry.dock.line}", 15_000)
        self.proxies.append(entry)
        self.attached.emit(entry)
        return entry

    def _failed(self, proxy: ProxyProcess, message: str) -> None:
        if proxy in self.pending:
            self.pending.remove(proxy)
        meta_path(proxy.ready_file).unlink(missing_ok=True)
        text = f"The proxy could not start.\n\n{message}"
        self.window.report_error("Cannot start the proxy", text)
        self.failed.emit(message)

    # -- re-attaching ----------------------------------------------------------------
    def reattach(self) -> list[Attached]:
        """Proxies an app that is gone started and that are still alive (never those of
        an app that still runs: see :mod:`.ownership`)."""
        known = {e.proxy.pid for e in self.proxies}
        found = []
        for path, info in remembered_proxies():
            meta = read_meta(path)
            if int(info["pid"]) in known or owned_by_a_live_app(meta):
                continue
            meta.pop("owner", None)
            adopted = ProxyProcess.adopt(path, info, self)
            write_meta(path, meta)  # ours from now on
            found.append(self._attach(adopted, info, meta))
        for meta_file in orphan_metas(proxies_dir()):
            meta_file.unlink(missing_ok=True)
        return found

    # -- stopping --------------------------------------------------------------------
    def stop(self, proxy: ProxyProcess | None = None) -> None:
        """Stop one proxy (default: all) and take its panels down; live tabs stay."""
        for entry in [e for e in self.proxies if proxy is None or e.proxy is proxy]:
            self.proxies.remove(entry)
            if entry.panel is not None:
                connection = entry.panel.connection
                connection.stop()
                if connection in self.window.proxies:
                    self.window.proxies.remove(connection)
                self.window.removeDockWidget(entry.panel)
                entry.panel.deleteLater()
            if entry.dock is not None:
                self.window.removeDockWidget(entry.dock)
                entry.dock.deleteLater()
            entry.proxy.stop()
            meta_path(entry.proxy.ready_file).unlink(missing_ok=True)
        for pending in [p for p in self.pending if proxy is None or p is proxy]:
            self.pending.remove(pending)
            pending.stop()

    def stop_menu(self) -> int:
        """Proxy ▸ Stop: stop every proxy started here, and say what happened (also when
        there was nothing to stop); returns how many were stopped."""
        count = len(self.proxies) + len(self.pending)
        self.stop()
        self.window.show_status(
            f"stopped {count} prox{'y' if count == 1 else 'ies'}"
            if count
            else "no proxy started here is running (Proxy ▸ Start… starts one)",
            10_000,
        )
        return count

    def shutdown(self) -> None:
        self.stop()


def _writer_gone(view: Any, why: str) -> None:
    """Tell a proxy's live tab its writer is gone (a closed tab has nothing to tell)."""
    live = getattr(view, "live", None)
    if live is not None:
        live.writer_stopped(why)
