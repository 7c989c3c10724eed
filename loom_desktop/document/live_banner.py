"""A live tab's two bars: the live status bar, and the banner for what cannot be read.

The status bar (:class:`LiveBar`): the live indicator, the run's status (with how a
gone writer is known as its tooltip), Follow tail and Save as trace.

The banner (:class:`ProblemBanner`) shows when part of the journal cannot be read or shown.

Why a banner and not a dialog: the run goes on being written, and what was read
before and after the bad line is still true; a dialog would close the tab or stop
the following. The banner names the line and the cause, so the user can look at
the file (or tell whoever wrote it), and stays until the journal is rewritten.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from loom_core.live.live_status import (
    ENDED,
    FAILED,
    FINISHED,
    HUMAN,
    REWRITTEN,
    STOPPED,
    WAITING,
)
from loom_core.live.reread import IDLE

_STYLE = (
    "QLabel { background: #fff3e0; color: #5d4037; border: 1px solid #ffb74d; padding: 4px 8px; }"
)
_TOOLTIP_LINES = 20
_COLORS = {
    FINISHED: "#546e7a",
    HUMAN: "#ef6c00",
    FAILED: "#c62828",
    REWRITTEN: "#6a1b9a",
    STOPPED: "#c62828",
    IDLE: "#546e7a",  # a foreign file nobody writes right now (still followed)
}


class LiveBar(QWidget):
    """The live indicator, the run's status, Follow tail and Save as trace."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.dot = QLabel("● LIVE")
        self.status = QLabel("waiting")
        self.follow = QPushButton("Follow tail")
        self.follow.setCheckable(True)
        self.follow.setChecked(True)
        self.follow.setToolTip("Keep the newest step selected (End)")
        self.save = QPushButton("Save as trace…")
        self.save.setEnabled(False)
        self._shown: tuple[str, bool, str] | None = None
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 2, 6, 2)
        for w in (self.dot, self.status):
            lay.addWidget(w)
        self.rewrites = QLabel()
        self.rewrites.setToolTip(
            "loom-harness rewrites the journal when a run is resumed, "
            "recovered or forked; the tab then follows the new run"
        )
        lay.addWidget(self.rewrites)
        lay.addStretch(1)
        lay.addWidget(self.follow)
        lay.addWidget(self.save)

    def show_status(self, status: str, live: bool, why: str = "") -> None:
        if (status, live, why) == self._shown:
            return  # restyling widgets is costly and this is called for every update
        self._shown = (status, live, why)
        # a run that waits says for what (the file, its first step), not a bare "waiting"
        self.status.setText(f"{status} {why}" if status == WAITING and why else status)
        self.status.setToolTip(why)
        color = _COLORS.get(status, "#2e7d32")
        self.status.setStyleSheet(f"color: {color}; font-weight: bold;")
        self.dot.setText("● LIVE" if live else "○ ended")
        self.dot.setStyleSheet("color: #d50000; font-weight: bold;" if live else "color: #777;")
        self.save.setEnabled(status in (*ENDED, HUMAN))
        done = status == FINISHED  # the run is over: offer to keep it as a trace
        self.save.setText("Run finished — save as trace…" if done else "Save as trace…")
        self.save.setStyleSheet("font-weight: bold;" if done else "")


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
                parts.append(
                    f"⚠ Line {number} of the journal cannot be read: {cause}. It is "
                    "skipped; the lines before and after it are shown."
                )
            else:
                parts.append(
                    f"⚠ {len(self.lines)} lines of the journal cannot be read; the "
                    f"last is line {number}: {cause}. They are skipped; the lines "
                    "around them are shown."
                )
        if self.notes:
            more = f" (and {len(self.notes) - 1} more)" if len(self.notes) > 1 else ""
            parts.append(f"⚠ {self.notes[-1]}{more}")
        self.setText("\n".join(parts))
        shown = [f"line {n}: {c}" for n, c in self.lines[-_TOOLTIP_LINES:]]
        self.setToolTip("\n".join(shown + self.notes[-_TOOLTIP_LINES:]))
        self.setVisible(True)
