"""Large windows ask for no more than the screen has: the fork dialog (1180×760) and the
heal dialog (1280×700) ran off a small laptop's screen, the main window (1280×820) too.
The offscreen platform's screen is 800×800."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QWidget

from loom_core.views.steps import step_of_seq
from loom_desktop.dialogs import SCREEN_MARGIN
from loom_desktop.main_window import MainWindow


def fits(widget: QWidget) -> bool:
    room = widget.screen().availableGeometry()
    least = widget.minimumSizeHint()
    return widget.width() <= max(room.width() - SCREEN_MARGIN, least.width()) and (
        widget.height() <= max(room.height() - SCREEN_MARGIN, least.height())
    )


def test_windows_and_dialogs_fit_the_screen(qtbot, sample: Path) -> None:
    window = MainWindow()  # no size asked: its own default
    qtbot.addWidget(window)
    assert window.screen().availableGeometry().width() < 1280  # the test means something
    assert fits(window)
    view = window.open_path(str(sample), background=False)
    fork = window.forks.fork_from_here(view, step_of_seq(view.session.timeline, 10))
    qtbot.addWidget(fork)
    heal = window.doctor.heal(view)
    for dialog in (fork, heal):
        assert fits(dialog), (type(dialog).__name__, dialog.size(), dialog.minimumSizeHint())
    heal.shutdown()
    heal.close()
    fork.close()
