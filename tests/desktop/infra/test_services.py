"""The window's services to the features: a protocol, implemented by the main window.

Features report errors and status through :class:`WindowServices` instead of reaching
into the window (``window.errors.append``); none imports the window's module.
"""

from __future__ import annotations

import ast
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

import loom_desktop
from loom_desktop.features.compare.dialog import report_error
from loom_desktop.infra.services import WindowServices
from loom_desktop.main_window import MainWindow

PACKAGE = Path(loom_desktop.__file__).parent


class _Services:
    """A window stand-in that only implements the protocol."""

    def __init__(self) -> None:
        self.reported: list[tuple[str, str]] = []
        self.said: list[str] = []

    def report_error(
        self, title: str, message: str, parent: QWidget | None = None, details: str = ""
    ) -> QMessageBox:
        self.reported.append((title, message))
        return QMessageBox()

    def show_status(self, message: str, timeout_ms: int) -> None:
        self.said.append(message)

    def note_run(self, path: str, event: str, error: str = "") -> None:
        self.said.append(f"{event} {path}")


def test_main_window_implements_the_services(qtbot, window: MainWindow) -> None:
    assert isinstance(window, WindowServices)
    box = window.report_error("Cannot compare", "Cannot compare a.json\n\nbroken", details="tail")
    assert window.errors[-1] == "Cannot compare a.json\n\nbroken\n\ntail"
    assert box.isVisible() and box.text().startswith("Cannot compare a.json")
    assert box.informativeText() == "tail" and box.parent() is window
    box.close()
    window.show_status("hello", 1_000)
    assert window.statusBar().currentMessage() == "hello"


def test_a_feature_reports_through_the_protocol(qapp) -> None:
    services = _Services()
    assert isinstance(services, WindowServices)
    report_error(services, "Cannot compare x\n\nnot loaded")
    assert services.reported == [("Cannot compare", "Cannot compare x\n\nnot loaded")]


def test_features_and_document_do_not_import_the_window() -> None:
    for folder in ("features", "document"):
        for path in (PACKAGE / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    assert node.module != "loom_desktop.main_window", path
                elif isinstance(node, ast.Import):
                    assert all(a.name != "loom_desktop.main_window" for a in node.names), path
