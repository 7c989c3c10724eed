"""The Listen for OpenTelemetry dialog: port, save folder, start / stop, what to export.

Why a dialog that stays open rather than a one-shot form: it is also where the user sees
that the app is listening, copies the ``OTEL_EXPORTER_OTLP_ENDPOINT=…`` line for the agent,
and finds the traces received so far (double-click opens one again).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from loom_desktop.features.otel.listener import DEFAULT_PORT, OtelListener, default_folder


def export_line(endpoint: str) -> str:
    """What the agent's shell needs (the OTLP exporters read it)."""
    return f"export OTEL_EXPORTER_OTLP_ENDPOINT={endpoint}"


class ListenDialog(QDialog):
    """Start and stop the window's :class:`OtelListener`; the state follows it."""

    def __init__(
        self,
        listener: OtelListener,
        start: Callable[[int, Path], bool],
        open_path: Callable[[str], object],
        parent: QWidget | None = None,
    ) -> None:
        """``start(port, folder)`` starts the listener (reporting a failure itself);
        ``open_path`` opens a received trace again."""
        super().__init__(parent)
        self.setWindowTitle("Listen for OpenTelemetry")
        self.listener = listener
        self._start = start
        self._open = open_path
        self.port = QSpinBox(minimum=0, maximum=65535, value=DEFAULT_PORT)
        self.port.setToolTip("0 picks any free port")
        self.folder = QLineEdit(str(listener.folder or default_folder()))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        form = QFormLayout()
        form.addRow("Port on 127.0.0.1:", self.port)
        form.addRow("Save traces in:", row)
        self.state = QLabel(wordWrap=True)
        self.line = QLabel()
        self.line.setStyleSheet("font-family: monospace;")
        self.copy_btn = QPushButton("Copy")
        self.copy_btn.clicked.connect(self.copy)
        line_row = QHBoxLayout()
        line_row.addWidget(self.line, 1)
        line_row.addWidget(self.copy_btn)
        self.toggle = QPushButton()
        self.toggle.clicked.connect(self._toggle)
        self.received = QListWidget()
        self.received.itemActivated.connect(self._reopen)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.state)
        lay.addLayout(line_row)
        lay.addWidget(QLabel("Traces received (double-click to open):"))
        lay.addWidget(self.received)
        lay.addWidget(self.toggle)
        listener.state_changed.connect(self.refresh)
        listener.trace_arrived.connect(self._add_trace)
        for trace_id, path in listener.traces:
            self._add_trace(trace_id, path)
        self.refresh()

    def refresh(self) -> None:
        """Show whether and where the listener listens."""
        on = self.listener.listening
        if on:  # the bound port (0 asked for any)
            self.port.setValue(int(self.listener.endpoint.rsplit(":", 1)[-1]))
        self.port.setEnabled(not on)
        self.folder.setEnabled(not on)
        self.toggle.setText("Stop listening" if on else "Start listening")
        self.line.setText(export_line(self.listener.endpoint) if on else "")
        self.copy_btn.setEnabled(on)
        self.state.setText(
            f"Listening on {self.listener.endpoint}/v1/traces and /v1/logs (OTLP/HTTP, JSON or "
            "protobuf); "
            f"each trace opens as a live tab and is saved in {self.listener.folder}."
            if on
            else "Not listening."
        )

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.line.text())

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Save traces in", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def _toggle(self) -> None:
        if self.listener.listening:
            self.listener.stop()
            return
        self.start()

    def start(self) -> bool:
        """Start with the dialog's port and folder; True when listening."""
        self.received.clear()
        return self._start(self.port.value(), Path(self.folder.text().strip()))

    def _add_trace(self, trace_id: str, path: str) -> None:
        item = QListWidgetItem(trace_id)
        item.setToolTip(path)
        item.setData(Qt.ItemDataRole.UserRole, path)
        self.received.addItem(item)

    def _reopen(self, item: QListWidgetItem) -> None:
        self._open(str(item.data(Qt.ItemDataRole.UserRole)))
