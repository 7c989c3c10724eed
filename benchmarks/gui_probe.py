"""Child process of open_trace.py: time the real GUI opening and scrubbing a trace.

argv: PATH START [--baseline], where START is the parent's ``time.time()`` just
before it spawned this process, so figures include interpreter and Qt start-up.
``--baseline`` opens PATH (a tiny trace) and reports only the peak memory: what Qt,
pyqtgraph and the window cost before any run is loaded. ``--jump-parts`` reports only
where a far jump's CPU goes (see jump_parts.py); ``--stall-parts`` only what the GUI thread
did in the longest stalls until the plot is shown (see stall_parts.py).

Besides first paint, ready and scrubbing, it records the event loop's longest stall
while the run loads (a 5 ms QTimer's largest gap beyond its interval: a user's
click waits that long), jumps to far steps (End, a click far along the timeline),
and one full repaint of the plot with the whole run in view (the bars aggregate
per pixel column) and zoomed to a few hundred steps (exact bars).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.gui_app import open_in_app  # noqa: E402  (first: the core before PySide6, as the app)

# isort: split
from PySide6.QtCore import QEvent, QObject, QTimer  # noqa: E402

from benchmarks.jump_parts import jump_parts  # noqa: E402
from benchmarks.measure import disk_read_mb, peak_rss_mb  # noqa: E402
from benchmarks.stall_parts import Sampler, report  # noqa: E402

MOVES_PER_SPOT, SPOTS, JUMPS = 40, 10, 40
PROBE_MS = 5


class PaintWatch(QObject):
    """Records when the step list first paints rows, and its first paint once complete."""

    def __init__(self, view, start: float) -> None:
        super().__init__()
        self.view, self.start = view, start
        self.first_paint = self.ready = None
        self.first_paint_cpu = self.ready_cpu = 0.0  # CPU seconds of the process by then
        self.first_paint_disk_mb = 0.0  # read from the disk by then: a cold start if large

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint and self.view.model.rowCount() > 0:
            now = time.time() - self.start
            if self.first_paint is None:
                self.first_paint = now
                self.first_paint_cpu = time.process_time()
                self.first_paint_disk_mb = disk_read_mb()
            if self.view.complete and self.ready is None:
                self.ready = now
                self.ready_cpu = time.process_time()
        return False


class StallProbe(QObject):
    """A fast timer; the largest gap between its ticks, less its interval, is the
    longest time the event loop could not answer the user."""

    def __init__(self) -> None:
        super().__init__()
        self.last = time.perf_counter()
        self.last_cpu = time.thread_time()
        self.worst = 0.0
        # the GUI thread's CPU time between two ticks: the same stall without the wait for
        # a core (on a loaded machine the wall gap is mostly that wait)
        self.worst_cpu = 0.0
        self.gaps: list[tuple[float, float, float]] = []  # (start, end, GUI CPU ms) > 10 ms
        self.timer = QTimer(self, interval=PROBE_MS)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.worst = max(self.worst, (now - self.last) * 1000 - PROBE_MS)
        self.worst_cpu = max(self.worst_cpu, (cpu - self.last_cpu) * 1000)
        if now - self.last > 0.010 + PROBE_MS / 1000:
            self.gaps.append((self.last, now, (cpu - self.last_cpu) * 1000))
        self.last, self.last_cpu = now, cpu


CPU_MS: list[float] = []  # the GUI thread's CPU time of each timed move


def _move(app, view, step: int) -> float:
    """One step change end to end, in milliseconds (its GUI-thread CPU time goes to
    CPU_MS: on a busy machine the wall time is mostly waiting for a core)."""
    t, c = time.perf_counter(), time.thread_time()
    view.session.set_step(step)
    view.flush_render()  # the coalesced render, now rather than next loop turn
    app.processEvents()  # repaint list, plot cursor, context view, status bar
    CPU_MS.append((time.thread_time() - c) * 1000)
    return (time.perf_counter() - t) * 1000


def scrub(app, view) -> list[float]:
    """Move step by step at spots spread over the run, the last spot ending on the
    last step; time each move end to end."""
    n = view.session.count
    times = []
    for spot in range(SPOTS):
        base = int(spot * (n - MOVES_PER_SPOT - 1) / max(1, SPOTS - 1))
        view.session.set_step(base)
        app.processEvents()
        times += [_move(app, view, base + k) for k in range(1, MOVES_PER_SPOT + 1)]
    return times


def jumps(app, view) -> list[float]:
    """Far moves: to random steps, to the first and to the last."""
    n = view.session.count
    rng = random.Random(1)
    targets = [rng.randrange(n) for _ in range(JUMPS - 2)] + [0, n - 1]
    return [_move(app, view, s) for s in targets]


def _last_step(app, view) -> float:
    """The move onto the run's last step, from the one before it."""
    n = view.session.count
    view.session.set_step(max(0, n - 2))
    app.processEvents()
    return _move(app, view, n - 1)


def plot_paint_ms(app, view) -> dict[str, float]:
    """One full plot repaint, whole run in view vs a 400-step window (median of 5)."""
    plot = view.timeline_widget
    n = view.session.count
    out = {}
    for label, (x0, x1) in (("all", (0, n)), ("zoomed", (n // 2, n // 2 + 400))):
        plot.setXRange(x0, x1, padding=0)
        app.processEvents()
        times = []
        for _ in range(5):
            plot.bars.update()  # drop its cached pixmap: a real repaint of every bar
            t = time.perf_counter()
            plot.viewport().repaint()
            times.append((time.perf_counter() - t) * 1000)
        out[f"plot_paint_ms_{label}"] = statistics.median(times)
    return out


def _until_plot(app, view, start: float, deadline: float) -> float:
    """Seconds from process start until the tab's plot was built and painted: a big run's
    plot comes after its rows are complete (the stall probe keeps running meanwhile)."""
    while view.timeline_widget is None and time.time() < deadline:
        app.processEvents()
        time.sleep(0.001)
    if view.timeline_widget is None:
        raise SystemExit("the tab built no plot before the deadline")
    view.timeline_widget.repaint()  # its first paint, now
    shown = time.time() - start
    app.processEvents()  # the stall probe's overdue tick records the build and the paint
    return shown


def main() -> None:
    path, start = sys.argv[1], float(sys.argv[2])
    app, window, view = open_in_app(path, library="--no-library" not in sys.argv)
    probe = StallProbe()
    sampler = Sampler() if "--stall-parts" in sys.argv else None
    watch = PaintWatch(view, start)
    view.table.viewport().installEventFilter(watch)
    deadline = time.time() + 600
    while watch.ready is None and time.time() < deadline:
        app.processEvents()
        time.sleep(0.001)
    stall = probe.worst
    plot_s = _until_plot(app, view, start, deadline)
    if "--baseline" in sys.argv:  # Qt, pyqtgraph and the window with its plot
        print(json.dumps({"qt_baseline_mb": peak_rss_mb()}))
        return
    stall_to_plot, stall_to_plot_cpu = probe.worst, probe.worst_cpu
    probe.timer.stop()
    if sampler is not None:  # only what the longest stalls were made of
        sampler.stop()
        marks = {"first_paint_s": watch.first_paint, "ready_s": watch.ready, "plot_s": plot_s}
        stalls = report(probe.gaps, sampler, start)
        print(json.dumps({"stall_to_plot_ms_max": stall_to_plot, **marks, "stalls": stalls}))
        window.close()
        return
    for _ in range(20):  # let the first render settle
        app.processEvents()
        time.sleep(0.005)
    if "--jump-parts" in sys.argv:  # only where a far jump's time goes
        print(json.dumps({**jump_parts(app, view), "load_average": os.getloadavg()[0]}))
        window.close()
        return
    proc, gui = time.process_time(), time.thread_time()
    times = sorted(scrub(app, view))
    # the CPU the process's other threads took while the user scrubbed: they hold the
    # interpreter lock the GUI thread's moves wait for
    others = (time.process_time() - proc) - (time.thread_time() - gui)
    scrub_cpu = sorted(CPU_MS)
    far = sorted(jumps(app, view))
    jump_cpu = sorted(CPU_MS[len(scrub_cpu) :])
    result = {
        "first_paint_s": watch.first_paint,
        "ready_s": watch.ready,
        "stall_ms_max": stall,
        "plot_s": plot_s,
        "stall_to_plot_ms_max": stall_to_plot,
        "stall_to_plot_cpu_ms_max": stall_to_plot_cpu,
        "first_paint_cpu_s": watch.first_paint_cpu,
        "first_paint_disk_read_mb": watch.first_paint_disk_mb,
        "ready_cpu_s": watch.ready_cpu,
        "scrub_cpu_ms_p99": scrub_cpu[int(len(scrub_cpu) * 0.99) - 1],
        "scrub_ms_p50": statistics.median(times),
        "scrub_ms_p99": times[int(len(times) * 0.99) - 1],
        "scrub_ms_max": times[-1],
        "jump_ms_p50": statistics.median(far),
        "jump_ms_p99": far[int(len(far) * 0.99) - 1],
        "jump_cpu_ms_p50": statistics.median(jump_cpu),
        "jump_cpu_ms_p99": jump_cpu[int(len(jump_cpu) * 0.99) - 1],
        "scrub_other_threads_cpu_s": others,
        "last_step_ms": _last_step(app, view),
        "peak_rss_mb": peak_rss_mb(),
        **plot_paint_ms(app, view),
    }
    window.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
