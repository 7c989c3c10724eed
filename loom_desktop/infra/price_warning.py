"""Tell the user, once per window, that their price override file could not be used.

Why a dialog and not a log line: the file is named by ``$LOOM_DESKTOP_PRICES`` because
the user wants *their* prices; silently showing the database's instead would make
every cost in the window quietly untrue. The window still opens and prices from the
bundled genai-prices snapshot; the status bar's cost tooltip says so too.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from loom_core.views.price_file import load_overrides


def price_file_message() -> str | None:
    """The dialog text for a malformed override file, or None when there is nothing to say."""
    problem = load_overrides().problem
    if problem is None:
        return None
    return (
        f"The price file {problem.path} was not used:\n\n{problem.cause}\n\n"
        "Costs are shown with the bundled genai-prices database instead. "
        "Fix the file (or unset LOOM_DESKTOP_PRICES) and restart to use your prices."
    )


def warn_bad_prices(window: QWidget, shown: list[str]) -> None:
    """Open a non-blocking warning naming the file and the cause (``shown`` records it)."""
    message = price_file_message()
    if message is None:
        return
    shown.append(message)
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "Price file not used",
        message,
        QMessageBox.StandardButton.Ok,
        window,
    )
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
