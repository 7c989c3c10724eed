"""Child process of open_trace.py: time the real GUI opening and scrubbing a trace.

argv: PATH START, where START is the parent's ``time.time()`` just before it
spawned this process, so figures include interpreter and Qt start-up.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QEvent, QObject  # noqa: E402

import loom_desktop  # noqa: E402,F401  (pins pyqtgraph to PySide6)
from benchmarks.gui_app import open_in_app  # noqa: E402
from benchmarks.measure import peak_rss_mb  # noqa: E402

MOVES_PER_SPOT, SPOTS = 40, 10


class PaintWatch(QObject):
    """Records when the step list first paints rows, and its first paint once complete."""

    def __init__(self, view, start: float) -> None:
        super().__init__()
        self.view, self.start = view, start
        self.first_paint = self.ready = None

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint and self.view.model.rowCount() > 0:
            now = time.time() - self.start
            if self.first_paint is None:
                self.first_paint = now
            if self.view.complete and self.ready is None:
                self.ready = now
        return False


def scrub(app, view) -> list[float]:
    """Move step by step at spots spread over the run; time each move end to end."""
    n = view.session.count
    times = []
    for spot in range(SPOTS):
        base = int(spot * (n - MOVES_PER_SPOT - 1) / max(1, SPOTS - 1))
        view.session.set_step(base)
        app.processEvents()
        for k in range(1, MOVES_PER_SPOT + 1):
            t = time.perf_counter()
            view.session.set_step(base + k)
            view.flush_render()  # the coalesced render, now rather than next loop turn
            app.processEvents()  # repaint list, plot cursor, context view, status bar
            times.append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    path, start = sys.argv[1], float(sys.argv[2])
    app, window, view = open_in_app(path)
    watch = PaintWatch(view, start)
    view.table.viewport().installEventFilter(watch)
    deadline = time.time() + 300
    while watch.ready is None and time.time() < deadline:
        app.processEvents()
        time.sleep(0.002)
    times = sorted(scrub(app, view))
    result = {
        "first_paint_s": watch.first_paint,
        "ready_s": watch.ready,
        "scrub_ms_p50": statistics.median(times),
        "scrub_ms_p99": times[int(len(times) * 0.99) - 1],
        "scrub_ms_max": times[-1],
        "peak_rss_mb": peak_rss_mb(),
    }
    window.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
