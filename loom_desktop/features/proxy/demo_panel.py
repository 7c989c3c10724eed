"""Help ▸ Run offline demo's output panel: everything the agent printed, and how it ended.

Why a panel: the agent is a separate process; when it failed, its last words went to
the status bar for a moment and were gone, and the demo looked as if it had simply
stopped. Its stdout and stderr (stderr in red) stay here with the demo's own notes,
and the header says whether it is running, finished, or failed with which status.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QDockWidget, QLabel, QTextEdit, QVBoxLayout, QWidget

MAX_BLOCKS = 5000  # lines kept: a runaway agent must not grow the panel forever


class DemoOutputDock(QDockWidget):
    """A dock with a status line and the agent's output; :meth:`clear` for a new run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Demo agent output", parent)
        self.setObjectName("demo-output")
        self.state = QLabel()
        self.text = QTextEdit(readOnly=True)
        self.text.setFont(QFont("monospace"))
        self.text.document().setMaximumBlockCount(MAX_BLOCKS)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.state)
        lay.addWidget(self.text)
        self.setWidget(body)
        self.lines: list[tuple[str, str]] = []  # (channel, text): stdout, stderr or demo

    def clear(self) -> None:
        self.lines.clear()
        self.text.clear()

    def add(self, channel: str, text: str) -> None:
        """One line: ``stdout`` / ``stderr`` of the agent, or ``demo`` (what the demo did)."""
        self.lines.append((channel, text))
        color = {"stderr": "#c62828", "demo": "#546e7a"}.get(channel, "#212121")
        # Always markup: QTextEdit takes a line that does not look like HTML as plain
        # text, and would show the escapes (&quot;) literally.
        self.text.append(
            f'<span style="color:{color}; white-space:pre-wrap">{html.escape(text)}</span>'
        )

    def show_state(self, text: str, failed: bool = False) -> None:
        self.state.setText(text)
        self.state.setStyleSheet("color: #c62828; font-weight: bold;" if failed else "")

    def place(self, window: object) -> None:
        """Dock it at the bottom of ``window`` (a QMainWindow) and show it."""
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self)  # type: ignore[attr-defined]
        self.show()
