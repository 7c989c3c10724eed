"""Small dialogs: the keyboard shortcut sheet and About."""

from __future__ import annotations

import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

SHORTCUTS = (
    ("← / →", "previous / next step"),
    ("Home / End", "first / last step"),
    ("Space", "play / pause"),
    (", / .", "previous / next step of the same kind"),
    ("Ctrl+O", "open a trace, journal or wirelog"),
    ("Ctrl+F", "filter steps (text, kind:model, tool:name, agent:x, is:error, is:shield)"),
    ("F", "fork from the current model step (edit its context, re-run the tail)"),
    ("Ctrl+Shift+K", "doctor: the context checkup of the current run (click a finding to see it)"),
    ("Ctrl+Shift+D", "compare two runs side by side"),
    ("N / P", "in a comparison: next / previous difference"),
    ("Ctrl+W", "close the tab"),
    ("?", "this sheet"),
)


def shortcuts_html() -> str:
    rows = "".join(f"<tr><td><b>{k}</b></td><td>{v}</td></tr>" for k, v in SHORTCUTS)
    return f"<table cellspacing=6>{rows}</table>"


def show_shortcuts(parent: QWidget) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.NoIcon, "Keyboard shortcuts", shortcuts_html(),
                      QMessageBox.StandardButton.Close, parent)
    box.open()
    return box


def about_html(version: str) -> str:
    """The About text: what the app is, and the versions a bug report needs."""
    return (f"<h3>Loom Desktop {version}</h3>"
            "<p>A native, offline time-travel debugger for AI agent runs.</p>"
            "<p>Reads and writes the loom-harness trace, journal and wirelog formats.</p>"
            f"<p><small>Qt {qVersion()} · PySide6 {pyside_version} · "
            f"Python {platform.python_version()}</small></p>")


def show_about(parent: QWidget, version: str) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Information, "About Loom Desktop", about_html(version),
                      QMessageBox.StandardButton.Ok, parent)
    icon = QApplication.windowIcon()  # the application icon, when the app has set one
    if not icon.isNull():
        box.setIconPixmap(icon.pixmap(64, 64))
    box.open()
    return box
