"""The context view: the frame a model saw, a tool's call and result, and raw JSON.

Rendering is bounded (see :mod:`loom_desktop.document.context_html`), so it is cheap
enough to follow the cursor; the raw JSON tab is filled only while it is shown.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTabWidget, QTextBrowser, QWidget

from loom_core.views.recorded import source_record
from loom_core.views.timeline import Timeline
from loom_desktop.document.context_html import ViewState, step_html

RAW_LIMIT = 200_000


class ContextView(QTabWidget):
    """Two tabs: the rendered context and the step's raw JSON."""

    step_link_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._anchor)
        # One layout per step: with the bar shown only when needed, a page taller than the
        # view after one that fitted (or the reverse) was laid out twice, at both widths,
        # and its text re-wrapped as the user moved; a bar always shown keeps the width.
        self.browser.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.raw = QPlainTextEdit()
        self.raw.setReadOnly(True)
        self.raw.setFont(QFont("monospace"))
        self.addTab(self.browser, "Context")
        self.addTab(self.raw, "Raw JSON")
        # that the step shown is one the step list's filter hides (placed above the tabs
        # by the tab's layout: beside them it squeezed the tabs in a narrow pane)
        self.hidden_note = QLabel(wordWrap=True)
        self.hidden_note.setStyleSheet(
            "color: #5d4037; background: #fff3e0; border: 1px solid #ffb74d; padding: 2px 6px;"
        )
        self.hidden_note.setVisible(False)
        self.currentChanged.connect(lambda _i: self._fill_raw())
        self.timeline: Timeline | None = None
        self.step = -1
        self.state = ViewState()
        self._marked = False  # the rendered step shows the doctor's mark

    def show_step(self, timeline: Timeline, step: int) -> None:
        """Render ``step``; unfolding state survives only while the step stays the same."""
        moved = step != self.step or timeline is not self.timeline
        if moved:  # what the doctor panel points at stays marked in later frames too
            self.state = ViewState(
                system_open=self.state.system_open,
                highlight=self.state.highlight,
                highlight_episode=self.state.highlight_episode,
            )
        self.timeline, self.step = timeline, step
        self._render()
        if moved:
            self.browser.scrollToAnchor("new")
        self._fill_raw()

    def set_filtered_out(self, query: str | None) -> None:
        """Say that the step shown does not match the filter ``query`` (None: it does, or
        there is no filter): the list hides it, so nothing else would tell."""
        self.hidden_note.setText(
            ""
            if query is None
            else f"⚠ Hidden by the filter: this step does not match “{query}”, so the step "
            "list does not show it (Enter in the filter box goes to the first match)."
        )
        self.hidden_note.setVisible(query is not None)

    def highlight_effect(self, effect: int | None, episode: int | None = None) -> None:
        """Mark the message made by ``effect`` (or user ``episode``) wherever it appears and
        scroll to it; ``None`` for both clears the mark. Used by the doctor panel."""
        self.state.highlight, self.state.highlight_episode = effect, episode
        if self.timeline is None:
            return
        self._render()
        if effect is not None or episode is not None:
            self.setCurrentWidget(self.browser)  # the mark is in the rendered context
            self.scroll_to_mark()

    def scroll_to_mark(self) -> None:
        """Scroll to the doctor's mark, or to what the step added when the mark is not in
        this frame: never leave the user at the top, far from what they clicked."""
        self.browser.document().size()  # lay the whole document out: anchors have places
        self.browser.scrollToAnchor("finding" if self._marked else "new")

    def _render(self) -> None:
        if self.timeline is None or not 0 <= self.step < len(self.timeline):
            self.browser.setHtml("")
            self._marked = False
            return
        bar = self.browser.verticalScrollBar()
        keep = bar.value()
        html = step_html(self.timeline, self.step, self.state)
        self._marked = "name='finding'" in html
        self.browser.setHtml(html)
        bar.setValue(keep)

    def raw_text(self) -> str:
        """Pretty JSON of the step's entry (the episode text for user steps)."""
        tl = self.timeline
        if tl is None or not 0 <= self.step < len(tl):
            return ""
        effect = tl.effect_of[self.step]
        if effect < 0:
            return json.dumps(
                {"episode": tl.doc.episodes[tl.episode_of[self.step]]}, indent=2, ensure_ascii=False
            )
        value = json.loads(tl.doc.raw_entry(effect))
        record = source_record(tl.doc, effect)
        if record is not None:  # a foreign run: what its producer wrote, beside our effect
            value = {"source record": record, "as a loom effect": value}
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)

    def _fill_raw(self) -> None:
        if self.currentWidget() is not self.raw:
            return
        text = self.raw_text()
        if len(text) > RAW_LIMIT:
            text = text[:RAW_LIMIT] + f"\n… ({len(text) - RAW_LIMIT:,} more characters)"
        self.raw.setPlainText(text)

    def _anchor(self, url: QUrl) -> None:
        target = url.toString()
        if target == "loom:system":
            self.state.system_open = not self.state.system_open
        elif target == "loom:all":
            self.state.show_all = True
        elif target.startswith("loom:expand:"):
            self.state.expanded.add(target.split(":", 2)[2])
        elif target.startswith("loom:step:"):
            self.step_link_clicked.emit(int(target.split(":")[2]))
            return
        self._render()
