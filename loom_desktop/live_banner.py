"""The banner a live tab shows when part of its journal cannot be read or shown.

Why a banner and not a dialog: the run goes on being written, and what was read
before and after the bad line is still true; a dialog would close the tab or stop
the following. The banner names the line and the cause, so the user can look at
the file (or tell whoever wrote it), and stays until the journal is rewritten.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

_STYLE = ("QLabel { background: #fff3e0; color: #5d4037; border: 1px solid #ffb74d;"
          " padding: 4px 8px; }")
_TOOLTIP_LINES = 20


class ProblemBanner(QLabel):
    """Hidden until :meth:`add_lines` or :meth:`add_note`; :meth:`clear` hides it again."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setStyleSheet(_STYLE)
        self.setVisible(False)
        self.lines: list[tuple[int, str]] = []  # (line number, cause) of skipped lines
        self.notes: list[str] = []  # anything else that could not be shown

    def add_lines(self, lines: tuple[tuple[int, str], ...] | list[tuple[int, str]]) -> None:
        """Journal lines that were skipped, in file order."""
        if lines:
            self.lines.extend(lines)
            self._show()

    def add_note(self, text: str) -> None:
        """Something else that could not be shown as recorded (said once)."""
        if text not in self.notes:
            self.notes.append(text)
            self._show()

    def clear(self) -> None:
        self.lines.clear()
        self.notes.clear()
        self.setVisible(False)

    def _show(self) -> None:
        parts = []
        if self.lines:
            number, cause = self.lines[-1]
            if len(self.lines) == 1:
                parts.append(f"⚠ Line {number} of the journal cannot be read: {cause}. It is "
                             "skipped; the lines before and after it are shown.")
            else:
                parts.append(f"⚠ {len(self.lines)} lines of the journal cannot be read; the "
                             f"last is line {number}: {cause}. They are skipped; the lines "
                             "around them are shown.")
        if self.notes:
            more = f" (and {len(self.notes) - 1} more)" if len(self.notes) > 1 else ""
            parts.append(f"⚠ {self.notes[-1]}{more}")
        self.setText("\n".join(parts))
        shown = [f"line {n}: {c}" for n, c in self.lines[-_TOOLTIP_LINES:]]
        self.setToolTip("\n".join(shown + self.notes[-_TOOLTIP_LINES:]))
        self.setVisible(True)
