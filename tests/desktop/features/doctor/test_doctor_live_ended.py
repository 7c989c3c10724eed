"""A live run that has ended is checked like a finished one: the Doctor said "live run:
press Refresh to check the context recorded so far" after the demo's agent had exited and
its tab said "ended · finished"."""

from __future__ import annotations

from pathlib import Path

from loom_core.live.live_status import ENDED
from loom_desktop.main_window import MainWindow
from tests.core.harness_runs import journal_complete


def test_the_doctor_checks_a_live_run_once_it_has_ended(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    journal, _run = journal_complete(tmp_path)
    window.doctor.toggleViewAction().trigger()  # the panel open, as a user has it
    view = window.open_path(str(journal))  # a journal: a live tab until its run has ended
    assert view.live is not None
    try:
        qtbot.waitUntil(lambda: view.live.status in ENDED, timeout=20_000)
        summary = window.doctor.summary
        qtbot.waitUntil(lambda: "tokens" in summary.text(), timeout=20_000)
        assert "live run" not in summary.text()
        assert id(view) in window.doctor.results
    finally:
        view.live.stop()
