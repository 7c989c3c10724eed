"""Child process of live_latency.py: the real GUI watching a journal, timing each row.

argv: PATH N BURST. Prints "ready" once the tab is watching, then one JSON line.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QTimer  # noqa: E402

import loom_desktop  # noqa: E402,F401
from benchmarks.gui_app import open_in_app  # noqa: E402


def main() -> None:
    path, n, burst = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    app, window, view = open_in_app(path)
    latencies: list[float] = []
    marks: dict[str, float] = {}
    gaps = {"max": 0.0, "last": time.monotonic(), "on": False}

    def rows_inserted(_parent, first: int, last: int) -> None:
        now = time.monotonic_ns()
        doc = view.live.doc
        for step in range(first, last + 1):
            effect = view.session.timeline.effect_of[step]
            if effect < 0:
                continue
            written = int(doc.result(effect)[2:])
            if effect < n:
                latencies.append((now - written) / 1e6)
            elif effect == n:
                marks["burst_start"] = written / 1e9
        if last + 1 >= n + burst:
            marks["burst_done"] = now / 1e9
            app.quit()

    def tick() -> None:
        now = time.monotonic()
        if gaps["on"]:
            gaps["max"] = max(gaps["max"], now - gaps["last"] - 0.005)
        gaps["last"] = now
        gaps["on"] = len(latencies) >= n  # measure stalls during the burst

    view.model.rowsInserted.connect(rows_inserted)
    ticker = QTimer(interval=5)
    ticker.timeout.connect(tick)
    ticker.start()
    QTimer.singleShot(300, lambda: print("ready", flush=True))
    QTimer.singleShot(240_000, app.quit)  # bounded
    app.exec()
    ticker.stop()
    latencies.sort()
    window.close()
    print(
        json.dumps(
            {
                "p50_ms": round(statistics.median(latencies), 2) if latencies else None,
                "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 2)
                if latencies
                else None,
                "max_ms": round(latencies[-1], 2) if latencies else None,
                "rows_timed": len(latencies),
                "burst": burst,
                "burst_visible_s": round(marks["burst_done"] - marks["burst_start"], 3)
                if "burst_done" in marks and "burst_start" in marks
                else None,
                "max_block_ms": round(gaps["max"] * 1000, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
