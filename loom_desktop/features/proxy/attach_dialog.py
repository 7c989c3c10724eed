"""Proxy ▸ Attach to a Running Proxy…: pick one of the shielded proxies running here.

Why a list and not just a port box: every shielded proxy (ours, or loom-harness's
``loom proxy``) leaves a control-token file named after its port in the runtime dir, so
the app can say which ports an operator can attach to, instead of asking for a number
the user has to find in some terminal. The search probes each port (a loopback
connect), so it runs in a worker; the port box stays for a proxy on another runtime
dir. Proxies this app started are named with where they record.
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

from loom_core.proxy.running_proxies import FoundProxy, running_proxies, runtime_dir
from loom_desktop.features.proxy.launcher import remembered_proxies
from loom_desktop.infra.workers import Task

DEFAULT_PORT = 8788  # loom proxy's default, when nothing is found


def _find() -> tuple[list[FoundProxy], dict[int, dict[str, Any]]]:
    """The running proxies, and the ready files of those this app started (by port)."""
    ours = {}
    for _path, info in remembered_proxies():
        try:
            ours[int(info["port"])] = info
        except (KeyError, TypeError, ValueError):
            continue
    return running_proxies(), ours


def describe(found: FoundProxy, ours: dict[int, dict[str, Any]], attached: set[int]) -> str:
    """One list line: where, since when, whose, and whether it is attached already."""
    started = time.strftime("%H:%M", time.localtime(found.started))
    info = ours.get(found.port)
    whose = (
        f"started by Loom Desktop, recording to {info.get('save')}"
        if info
        else "another proxy (e.g. loom proxy)"
    )
    line = f"127.0.0.1:{found.port} · since {started} · {whose}"
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
        found, ours = result
        self.found = list(found)
        for proxy in self.found:
            item = QListWidgetItem(describe(proxy, ours, self.attached))
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
