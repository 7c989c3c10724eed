"""Small dialogs: the keyboard shortcut sheet, About, and File ▸ Watch Journal…'s picker;
and :func:`fit_size`, the size every large window asks for."""

from __future__ import annotations

import html
import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from loom_desktop.keys import sheet

SCREEN_MARGIN = 40  # pixels a window leaves free on each axis of a screen too small for it


def fit_size(widget: QWidget, width: int, height: int) -> None:
    """Resize ``widget`` to ``width``×``height``, or less where the screen is smaller: the
    fork dialog (1180×760) and the heal dialog (1280×700) ran off a 1024×768 screen. Never
    below what the widget's layout needs."""
    screen = widget.screen() or QApplication.primaryScreen()
    if screen is not None:
        room = screen.availableGeometry()
        least = widget.minimumSizeHint()
        width = max(min(width, room.width() - SCREEN_MARGIN), least.width())
        height = max(min(height, room.height() - SCREEN_MARGIN), least.height())
    widget.resize(width, height)


def _section(title: str, rows: list[tuple[str, str]]) -> str:
    cells = "".join(
        f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(v)}</td></tr>" for k, v in rows
    )
    return f"<p><b><i>{html.escape(title)}</i></b></p><table cellspacing=3>{cells}</table>"


def shortcuts_html(window: QWidget) -> str:
    """The ``?`` sheet: built from the window's real actions and the bound key tables, in two
    columns (window keys | each part's keys) so it fits a laptop screen."""
    first, *parts = sheet(window.actions())
    right = "".join(_section(*part) for part in parts)
    return (
        f"<table cellspacing=8><tr><td valign=top width=50%>{_section(*first)}</td>"
        f"<td valign=top>{right}</td></tr></table>"
    )


class ShortcutSheet(QDialog):
    """The sheet in a dialog as wide as its two columns (a message box is kept narrow)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.label = QLabel(
            shortcuts_html(parent), wordWrap=True, textFormat=Qt.TextFormat.RichText
        )
        self.label.setMinimumWidth(self.label.fontMetrics().averageCharWidth() * 110)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.label)
        lay.addWidget(buttons)

    def text(self) -> str:
        return self.label.text()


def show_shortcuts(parent: QWidget) -> ShortcutSheet:
    sheet_dialog = ShortcutSheet(parent)
    sheet_dialog.open()
    return sheet_dialog


def about_html(version: str) -> str:
    """The About text: what the app is, and the versions a bug report needs."""
    return (
        f"<h3>Loom Desktop {version}</h3>"
        "<p>A native, offline time-travel debugger for AI agent runs.</p>"
        "<p>Reads and writes the loom-harness trace, journal and wirelog formats.</p>"
        f"<p><small>Qt {qVersion()} · PySide6 {pyside_version} · "
        f"Python {platform.python_version()}</small></p>"
    )


def show_about(parent: QWidget, version: str) -> QMessageBox:
    box = QMessageBox(
        QMessageBox.Icon.Information,
        "About Loom Desktop",
        about_html(version),
        QMessageBox.StandardButton.Ok,
        parent,
    )
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
