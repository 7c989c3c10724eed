"""The proxies the main window started (or found again): Proxy ▸ Start…, Stop, Re-attach.

For each proxy: a live tab on its journal, an approvals panel on its control
plane, and a small dock with the ``export …_BASE_URL=…`` line, a Copy button and
a Stop button (which asks first while calls are held: the proxy denies them as it
stops). Everything is stopped when the window closes (SIGTERM, so the trace is
finalized). A proxy that could not start is reported in an error dialog
naming the cause (the proxy's own stderr line). One started with "publish when it
stops" has its trace published once it stopped (:mod:`.publish_at_stop`); the choice is
kept beside its ready file, so a proxy re-attached after a restart of the app does too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox

from loom_desktop.document.view import DocumentView
from loom_desktop.features.proxy.info_dock import ProxyInfoDock, dialect_of
from loom_desktop.features.proxy.launcher import (
    ProxyProcess,
    ProxySpec,
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
from loom_desktop.features.proxy.publish_at_stop import StopPublisher
from loom_desktop.features.proxy.saved_trace import show_saved_trace

if TYPE_CHECKING:  # the control plane's modules come with the first proxy (see attached.py)
    from loom_desktop.features.proxy.approvals_panel import ApprovalsPanel
    from loom_desktop.features.proxy.connection import ProxyConnection


@dataclass
class Attached:
    proxy: ProxyProcess
    info: dict[str, Any]
    panel: ApprovalsPanel | None = None  # the window's approvals panel, when it has a shield
    dock: ProxyInfoDock | None = None
    view: DocumentView | None = None  # the live tab
    connection: ProxyConnection | None = None  # its control plane, listed in the panel


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
        self.confirm_box: QMessageBox | None = None  # Stop's question while calls are held
        self.publisher = StopPublisher(window)

    # -- starting --------------------------------------------------------------------
    def start_dialog(self) -> Any:
        """Proxy ▸ Start…: the dialog (non-modal); Start launches the proxy."""
        from loom_desktop.features.proxy.start_dialog import StartProxyDialog

        library = self.window.library.controller
        dialog = StartProxyDialog(
            self.window, self.last_spec, library.team_address() or "", library.publish_blocker()
        )
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
        meta: dict[str, Any] = (
            {"dialect": spec.dialect, "confirm_timeout": spec.confirm_timeout} if spec else {}
        )
        if spec is not None and spec.publish:
            meta["publish"] = spec.publish
        write_meta(proxy.ready_file, meta)  # this app owns it: no other window takes it over
        self._attach(proxy, info, meta)

    def _attach(self, proxy: ProxyProcess, info: dict[str, Any], meta: dict[str, Any]) -> Attached:
        win = self.window
        entry = Attached(proxy, info)
        if info.get("save"):  # the Runs page lists the recording as running, then done
            save = str(info["save"])
            win.note_run(save, "recording")
            proxy.stopped.connect(lambda _code, s=save: win.note_run(s, "recorded"))
            if meta.get("publish"):
                library = str(meta["publish"])
                proxy.stopped.connect(lambda _c, s=save: self.publisher.publish(s, library))
        if info.get("journal"):
            entry.view = view = win.open_path(info["journal"])
            live = getattr(view, "live", None)
            if live is not None:  # its writer is this proxy, running
                live.writer_running()
                if info.get("save"):  # the proxy saves the trace: the tab says where
                    show_saved_trace(win, live, str(info["save"]))
            proxy.stopped.connect(
                lambda code, v=view: _writer_gone(
                    v, f"the proxy that wrote it stopped (exit status {code})"
                )
            )
        if info.get("token_file"):  # a shield is active: there is a control plane
            port, timeout = int(info["port"]), meta.get("confirm_timeout")
            entry.connection = win.attached.attach(port, timeout, entry.view)
            entry.panel = win.attached.approvals()
        dialect = meta.get("dialect") or dialect_of(str(info.get("target")))
        entry.dock = ProxyInfoDock(info, dialect, win)
        entry.dock.stop_btn.clicked.connect(lambda _c=False, p=proxy: self.ask_stop(p))
        win.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, entry.dock)
        lines = "; ".join(entry.dock.lines)
        win.show_status(f"proxy listening on {info['url']}: {lines}", 15_000)
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
            if entry.connection is not None:
                self.window.attached.detach(entry.connection)
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
        there was nothing to stop); returns how many were stopped (0 while it asks)."""
        count = len(self.proxies) + len(self.pending)
        if not count:
            self.window.show_status(
                "no proxy started here is running (Proxy ▸ Start… starts one)", 10_000
            )
            return 0
        return self.ask_stop(None)

    def held(self, proxy: ProxyProcess | None = None) -> int:
        """How many calls the proxy (default: every proxy started here) holds now."""
        panel = self.window.attached.panel
        sources = {e.connection for e in self.proxies if proxy is None or e.proxy is proxy}
        return sum(1 for row in panel.model.rows if row.source in sources) if panel else 0

    def ask_stop(self, proxy: ProxyProcess | None) -> int:
        """Stop ``proxy`` (None: all); while calls are held, ask first -- they are then
        denied with the reason "the proxy was stopped", so their agents get an answer.
        Returns how many were stopped (0 while asking; the box is ``confirm_box``)."""
        held = self.held(proxy)
        if not held:
            return self._stop_and_say(proxy)
        from loom_core.proxy.stop_signals import STOPPED_REASON  # asyncio: only when asked

        entries = [e for e in self.proxies if proxy is None or e.proxy is proxy]
        what = (
            f"the proxy on {entries[0].info.get('url')}"
            if len(entries) == 1
            else f"{len(entries)} proxies"
        )
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Stop the proxy?",
            f"Stop {what}? "
            f"{held} tool call{'s are' if held != 1 else ' is'} held for approval. "
            f"Stopping denies {'them' if held != 1 else 'it'} with the reason "
            f'"{STOPPED_REASON}", so the agent gets that answer instead of a dropped '
            "connection.",
            QMessageBox.StandardButton.Cancel,
            self.window,
        )
        stop = box.addButton("Deny and stop", QMessageBox.ButtonRole.DestructiveRole)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(lambda b: b is stop and self._stop_and_say(proxy))
        self.confirm_box = box
        box.open()
        return 0

    def _stop_and_say(self, proxy: ProxyProcess | None) -> int:
        count = len([e for e in self.proxies if proxy is None or e.proxy is proxy])
        count += len([p for p in self.pending if proxy is None or p is proxy])
        self.stop(proxy)
        self.window.show_status(f"stopped {count} prox{'y' if count == 1 else 'ies'}", 10_000)
        return count

    def shutdown(self) -> None:
        self.stop()


def _writer_gone(view: Any, why: str) -> None:
    """Tell a proxy's live tab its writer is gone (a closed tab has nothing to tell)."""
    live = getattr(view, "live", None)
    if live is not None:
        live.writer_stopped(why)
