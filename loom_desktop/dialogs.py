"""Small dialogs: the keyboard shortcut sheet, About, and File ▸ Watch Journal…'s picker."""

from __future__ import annotations

import html
import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QWidget

from .keys import FILTER_HELP, sheet


def shortcuts_html(window: QWidget) -> str:
    """The ``?`` sheet: built from the window's real actions and the bound key tables."""
    body = []
    for title, rows in sheet(window.actions()):
        body.append(f"<tr><td colspan=2><br><b><i>{html.escape(title)}</i></b></td></tr>")
        body += [f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(v)}</td></tr>"
                 for k, v in rows]
    return (f"<table cellspacing=4>{''.join(body)}</table>"
            f"<p>Filter syntax: {html.escape(FILTER_HELP)}</p>")


def show_shortcuts(parent: QWidget) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.NoIcon, "Keyboard shortcuts", shortcuts_html(parent),
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


def watch_file_dialog(parent: QWidget | None = None) -> QFileDialog:
    """Pick a journal to follow: an open dialog whose button says Watch.

    Why not a save dialog (as before): the file may not exist yet, which a save dialog
    allows, but its "Save" button promised to write something; nothing is written. An
    open dialog in ``AnyFile`` mode accepts a name that does not exist yet too.
    """
    dialog = QFileDialog(parent, "Watch journal", "", "Journals (*.jsonl);;All files (*)")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    dialog.setFileMode(QFileDialog.FileMode.AnyFile)
    dialog.setLabelText(QFileDialog.DialogLabel.Accept, "Watch")
    return dialog
