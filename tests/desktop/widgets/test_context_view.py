"""The context view lays a step's page out once, at one width, whatever its length."""

from __future__ import annotations

from pathlib import Path

from loom_desktop.main_window import MainWindow


def test_a_tall_page_after_one_that_fits_is_laid_out_once_at_the_same_width(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    browser = view.context_view.browser
    tl = view.session.timeline
    heights = {}
    for step in range(len(tl)):
        view.session.set_step(step)
        view.flush_render()
        heights[step] = browser.document().size().height()
    room = browser.viewport().height()
    short = next(s for s, h in heights.items() if h < room)
    tall = next(s for s, h in heights.items() if h > 2 * room)
    sizes: list = []  # the layout's sizes as it goes: a second width is a second layout
    browser.document().documentLayout().documentSizeChanged.connect(sizes.append)
    widths = []
    for step in (short, tall, short, tall):
        view.session.set_step(step)
        view.flush_render()
        qtbot.waitUntil(lambda: not view._render_timer.isActive())
        widths.append(browser.viewport().width())
        # what the page holds is still all there: the last message of a tall page
        assert browser.toPlainText().strip()
    assert len(set(widths)) == 1, widths  # the text does not re-wrap from step to step
    assert sizes and {size.width() for size in sizes} == {widths[0]}, sizes
