"""Proxy ▸ Attach to a Running Proxy…: pick one of the shielded proxies running here.

Why a list and not just a port box: every shielded proxy (ours, or loom-harness's
``loom proxy``) leaves a control-token file named after its port in the runtime dir, so
the app can say which ports an operator can attach to, instead of asking for a number
the user has to find in some terminal. The search probes each port (a loopback
connect), so it runs in a worker; the port box stays for a proxy on another runtime
dir. Each proxy is named for what it is: one this app started (with where it records),
Loom's own proxy started from a terminal (its event stream's ``hello`` says so), or
loom-harness's ``loom proxy`` (which has no event stream).
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from loom_core.proxy.control_client import ControlClient, ControlError, read_token
from loom_core.proxy.running_proxies import FoundProxy, running_proxies, runtime_dir
from loom_desktop.features.proxy.launcher import remembered_proxies
from loom_desktop.infra.workers import Task

DEFAULT_PORT = 8788  # loom proxy's default, when nothing is found
HELLO_S = 2.0  # our proxy answers its event stream at once
WHAT = {  # each kind of proxy, in full (the list line's tooltip)
    "app": "started by Loom Desktop (Proxy ▸ Start… or the offline demo)",
    "cli": "Loom's own proxy, started from a terminal or a script: python -m loom_core proxy "
    "(or record); its event stream said so",
    "harness": "loom-harness's proxy (loom proxy): it has no event stream, so the app polls it",
}


def _find() -> tuple[list[FoundProxy], dict[int, dict[str, Any]]]:
    """The running proxies, and what is known of each by port: the ready file of those
    this app started, else our proxy's ``hello`` (a proxy without one is loom-harness's)."""
    known: dict[int, dict[str, Any]] = {}
    for _path, info in remembered_proxies():
        try:
            known[int(info["port"])] = {**info, "started_by": "app"}
        except (KeyError, TypeError, ValueError):
            continue
    found = running_proxies()
    for proxy in found:
        if proxy.port not in known:
            known[proxy.port] = _ask_who(proxy.port)
    return found, known


def _ask_who(port: int) -> dict[str, Any]:
    try:
        hello = ControlClient(port, token=read_token(port), timeout=HELLO_S).hello()
    except ControlError:
        return {}
    return {**hello, "started_by": "cli"} if hello else {"started_by": "harness"}


def describe(found: FoundProxy, known: dict[int, dict[str, Any]], attached: set[int]) -> str:
    """One list line: where, since when, what it is, and whether it is attached already."""
    started = time.strftime("%H:%M", time.localtime(found.started))
    info = known.get(found.port) or {}
    whose = {
        "app": f"started by Loom Desktop, recording to {info.get('save')}",
        "cli": "Loom proxy started outside the app",
        "harness": "loom-harness's proxy (loom proxy)",
    }.get(str(info.get("started_by")), "a proxy that did not say what it is")
    held = len(info.get("pending") or [])
    line = f"127.0.0.1:{found.port} · since {started} · {whose}"
    line += f" · {held} held" if held else ""
    return line + (" · attached" if found.port in attached else "")


class AttachDialog(QDialog):
    """Lists running shielded proxies; :meth:`port` is the one chosen (or typed)."""

    def __init__(self, parent: QWidget | None = None, attached: set[int] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Attach to a running proxy")
        self.attached = attached or set()
        self.found: list[FoundProxy] = []
        self.status = QLabel(
            f"looking for proxies with a shield (token files in {runtime_dir()})…", wordWrap=True
        )
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._picked)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        self.port_box = QSpinBox(minimum=1, maximum=65535, value=DEFAULT_PORT)
        form = QFormLayout()
        form.addRow("Port on 127.0.0.1", self.port_box)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.attach_btn = buttons.addButton("Attach", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        for w in (self.status, self.list):
            lay.addWidget(w)
        lay.addLayout(form)
        lay.addWidget(buttons)
        self.resize(560, 320)
        self.task = Task(self)
        self.task.finished.connect(self._show)
        self.task.failed.connect(lambda exc: self.status.setText(f"could not look: {exc}"))
        self.task.start(lambda _ctx: _find())

    def _show(self, result: tuple[list[FoundProxy], dict[int, dict[str, Any]]]) -> None:
        found, known = result
        self.found = list(found)
        for proxy in self.found:
            item = QListWidgetItem(describe(proxy, known, self.attached))
            item.setToolTip(WHAT.get(str((known.get(proxy.port) or {}).get("started_by")), ""))
            item.setData(Qt.ItemDataRole.UserRole, proxy.port)
            self.list.addItem(item)
        if self.found:
            self.status.setText(
                f"{len(self.found)} prox{'y' if len(self.found) == 1 else 'ies'}"
                f" with a shield running here:"
            )
            self.list.setCurrentRow(0)
        else:
            self.status.setText(
                f"no proxy with a shield is running here (no live token file "
                f"in {runtime_dir()}); type the port of one elsewhere:"
            )

    def _picked(self, row: int) -> None:
        if 0 <= row < len(self.found):
            self.port_box.setValue(self.found[row].port)

    def port(self) -> int:
        return self.port_box.value()
