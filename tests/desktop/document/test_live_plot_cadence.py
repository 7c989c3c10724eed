"""While a run streams in, the live plot is redrawn at most once a second; when it
pauses, at once (a row arriving during a plot redraw waits for it: issue 14)."""

from __future__ import annotations

from pathlib import Path

from loom_desktop.document import live_view
from loom_desktop.main_window import MainWindow
from tests.core.live_helpers import effect, header, model_result


class _Clock:
    """Stands in for the controller's QElapsedTimer: the time since the last redraw."""

    def __init__(self, elapsed: int) -> None:
        self.ms = elapsed

    def isValid(self) -> bool:  # noqa: N802 - QElapsedTimer's API
        return True

    def elapsed(self) -> int:
        return self.ms

    def start(self) -> None:
        self.ms = 0


def test_plot_waits_while_steps_stream_and_catches_up_when_they_pause(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + effect(0, "model", model_result("hi")))
    view = window.open_path(str(path))
    live = view.live
    qtbot.waitUntil(lambda: live.builder is not None and len(live.builder.tl) > 1, timeout=10_000)
    redraws: list[int] = []
    live._refresh_plot = lambda: redraws.append(len(live.builder.tl))
    live._ui_timer.stop()
    steps = len(live.builder.tl)

    live._plot_clock = _Clock(live_view.PLOT_PAUSED_MS + 100)
    live._steps_at_ui = steps - 1  # a step came since the last refresh: still streaming
    live._refresh_ui()
    assert redraws == [] and live._ui_timer.isActive()  # it comes back later

    live._refresh_ui()  # nothing new since: the run paused
    assert redraws == [steps]

    live._plot_clock = _Clock(live_view.PLOT_MS)
    live._steps_at_ui = steps - 1
    live._refresh_ui()  # streaming, but the last redraw is a second old
    assert redraws == [steps, steps]
    live._ui_timer.stop()
