"""Benchmark: the GUI thread's CPU for one refresh of a live run's plot; one JSON line.

    python benchmarks/live_plot.py [--root CHECKOUT] [--tail]

A synthetic run (``synth.py``, its context and so its tokens per call growing) is
indexed as a live tab indexes it: the plot is shown (offscreen) with its first
``--start`` effects, then the run grows by ``--step`` effects ``--refreshes`` times and
the plot is refreshed each time as the live tab does (``set_timeline``, then the
repaint). ``--tail``: the cursor follows the last step, so the view pans with the run
(Follow tail); otherwise the new steps are out of view. ``--root``: the checkout whose
code is measured (another commit, for before/after; this one by default). The figure is
thread CPU time, so it compares on a loaded machine. No goal of its own: it is a part
of the live tail's p99 (``live_latency.py``, issue 24: < 16 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="checkout to measure")
    parser.add_argument("--effects", type=int, default=100_000)
    parser.add_argument("--start", type=int, default=50_000)
    parser.add_argument("--step", type=int, default=200)
    parser.add_argument("--refreshes", type=int, default=30)
    parser.add_argument("--tail", action="store_true", help="the view follows the tail")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(HERE))
    from benchmarks.synth import write_synth

    sys.path.insert(0, str(args.root.resolve()))  # its loom_core / loom_desktop first
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from loom_core.formats.loader import load
    from loom_core.views.timeline import TimelineBuilder
    from loom_desktop.widgets.timeline import TimelineWidget

    with tempfile.TemporaryDirectory() as tmp:
        builder = TimelineBuilder(load(write_synth(Path(tmp) / "run.loom.json", args.effects)))
    builder.extend(args.start)
    plot = TimelineWidget()
    plot.resize(1200, 260)
    plot.show()
    plot.set_timeline(builder.tl)
    plot.set_cursor(len(builder.tl) - 1)
    for _ in range(20):
        app.processEvents()
    cpu = []
    for k in range(1, args.refreshes + 1):
        builder.extend(min(args.effects, args.start + k * args.step))
        began = time.thread_time()
        plot.set_timeline(builder.tl)
        if args.tail:
            plot.set_cursor(len(builder.tl) - 1)
        app.processEvents()  # the repaint
        app.processEvents()
        cpu.append((time.thread_time() - began) * 1000)
    print(
        json.dumps(
            {
                "root": str(args.root),
                "view": "follows the tail" if args.tail else "new steps out of view",
                "steps": len(builder.tl),
                "refresh_cpu_ms": {
                    "p50": round(statistics.median(cpu), 2),
                    "mean": round(statistics.mean(cpu), 2),
                    "max": round(max(cpu), 2),
                },
                "goal": "none (a part of live_latency.py's p99 < 16 ms)",
                "load_average": round(os.getloadavg()[0], 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
