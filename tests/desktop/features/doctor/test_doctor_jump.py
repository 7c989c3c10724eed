"""A click on a Doctor finding shows its item: the context view scrolls to the marked item.

Why every finding of the bundled sample: each kind marks a different thing (a result, an
episode, the largest item a bloated call added), and a finding whose mark was missing
left the view at the top of a long context, far from what was clicked.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTextBrowser

from loom_desktop.main_window import MainWindow
from loom_desktop.resources import sample_trace
from tests.desktop.features.heal.test_doctor_heal import show_doctor


def mark_top(browser: QTextBrowser) -> float | None:
    """Where the doctor's mark (the ``finding`` anchor) is laid out, in document pixels."""
    doc = browser.document()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            if "finding" in it.fragment().charFormat().anchorNames():
                return doc.documentLayout().blockBoundingRect(block).top()
            it += 1
        block = block.next()
    return None


def test_every_finding_click_scrolls_to_its_marked_item(
    qtbot, window: MainWindow, open_and_wait
) -> None:
    view = open_and_wait(window, sample_trace())
    show_doctor(qtbot, window, view)
    panel, browser = window.doctor, view.context_view.browser
    kinds = set()
    view.context_view.setCurrentWidget(view.context_view.raw)  # even from the raw JSON tab
    for row in range(panel.model.rowCount()):
        finding = panel.model.finding_at(row)
        kinds.add(finding.kind)
        rect = panel.table.visualRect(panel.model.index(row, 5))
        qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        assert view.context_view.currentWidget() is browser
        top, bar = mark_top(browser), browser.verticalScrollBar()
        assert top is not None, f"{finding.kind} at step {finding.step}: nothing marked"
        assert bar.value() <= top < bar.value() + browser.viewport().height(), (
            finding.kind,
            top,
            bar.value(),
        )
        if top > browser.viewport().height():
            assert bar.value() > 0  # not left at the top
    assert "context_bloat" in kinds and len(kinds) >= 2
