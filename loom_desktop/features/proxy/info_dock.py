"""A started proxy's dock: the ``export …_BASE_URL`` line(s) with Copy, where it records, Stop.

Which lines: the proxy serves the Anthropic and the OpenAI dialects alike (the CLI's
banner prints both). The dock shows the one an agent of the upstream needs when the
upstream is known (the Anthropic or OpenAI API, or a URL that names one of them), and
both otherwise: a custom upstream used to get only ``ANTHROPIC_BASE_URL``, also when it
was an OpenAI-compatible server.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


def dialect_of(target: str) -> str:
    """``openai`` or ``anthropic`` when the upstream URL names one, else ``""`` (unknown)."""
    name = (urlsplit(target).hostname or target).lower()
    for dialect in ("openai", "anthropic"):
        if dialect in name:
            return dialect
    return ""


def export_lines(url: str, dialect: str) -> list[str]:
    """The shell lines that point an agent's SDK at the proxy (both when ``dialect`` is ``""``)."""
    anthropic, openai = f"export ANTHROPIC_BASE_URL={url}", f"export OPENAI_BASE_URL={url}/v1"
    if dialect == "openai":
        return [openai]
    if dialect == "anthropic":
        return [anthropic]
    return [anthropic, openai]


class ProxyInfoDock(QDockWidget):
    """The export line(s) with a Copy button, where the trace goes, and Stop."""

    def __init__(self, info: dict[str, Any], dialect: str, parent: QWidget | None = None) -> None:
        super().__init__(f"Proxy {info['host']}:{info['port']}", parent)
        self.setObjectName(f"proxy-{info['port']}")
        self.lines = export_lines(str(info["url"]), dialect)
        self.line = "\n".join(self.lines)  # what Copy puts on the clipboard
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
