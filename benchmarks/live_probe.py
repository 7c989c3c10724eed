"""Child process of live_latency.py: the real GUI watching a journal, timing each row.

argv: PATH N BURST. Prints "ready" once the tab is watching, then one JSON line.

Where the time goes, per timed row: ``tail_ms`` from the write to the tailer handing
the update over (file-system event, wake-up, read, parse), ``queue_ms`` from then
until the GUI thread takes it (it was busy: painting, the plot, other rows; or the
process had no CPU), ``insert_ms`` from then to the row insert. ``gui_busy`` is the
GUI thread's CPU time over the wall time of the run. ``stalls``: gaps of a 5 ms ticker of
at least a frame (16 ms) while the timed rows arrive, and the share of their time the GUI
thread ran (our work in the way), the process's other threads ran (holding the interpreter
lock), or neither (the process waited for a core). ``gui_cpu_s`` / ``other_threads_cpu_s``:
the CPU of the GUI thread and of every other thread of the process over the whole run;
``timed_rows_gui_cpu_s`` the GUI thread's while the timed rows came (without the start and
the burst: the figure to compare on a loaded machine) and ``timed_rows_inserts`` the row
inserts meanwhile (a busy GUI thread takes several lines in one insert).
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
from loom_desktop.document import live_view  # noqa: E402

_pushed: list[tuple[int, int]] = []  # (monotonic ns, first new effect) per update handed over
_drained: list[int] = []  # monotonic ns the GUI thread took the queued updates


def _instrument() -> None:
    push, drain = live_view._Bridge.push, live_view.LiveController._drain

    def timed_push(bridge: live_view._Bridge, update: live_view.JournalUpdate) -> None:
        first = update.new_effects[0].seq if update.new_effects else -1
        _pushed.append((time.monotonic_ns(), first if isinstance(first, int) else -1))
        push(bridge, update)

    def timed_drain(controller: live_view.LiveController) -> None:
        _drained.append(time.monotonic_ns())
        drain(controller)

    live_view._Bridge.push = timed_push  # type: ignore[method-assign]
    live_view.LiveController._drain = timed_drain  # type: ignore[method-assign]


_STALL_S = 0.016  # a gap of the 5 ms ticker this long is a frame missed
_stalls = {"count": 0, "wall": 0.0, "gui_cpu": 0.0, "other_cpu": 0.0}


def _stall(wall: float, gui_cpu: float, proc_cpu: float) -> None:
    """Sum up a ticker gap of at least a frame: how much of it the GUI thread ran (busy
    with our work), how much the process's other threads ran (the tailer, watchdog: the
    interpreter lock), the rest neither (waiting for a core)."""
    if wall >= _STALL_S:
        _stalls["count"] += 1
        _stalls["wall"] += wall
        _stalls["gui_cpu"] += gui_cpu
        _stalls["other_cpu"] += max(0.0, proc_cpu - gui_cpu)


def _stall_summary() -> dict[str, object]:
    wall = _stalls["wall"] or 1.0
    return {
        "stalls": _stalls["count"],
        "stall_ms": round(_stalls["wall"] * 1000),
        "stall_gui_cpu_share": round(_stalls["gui_cpu"] / wall, 2),
        "stall_other_threads_cpu_share": round(_stalls["other_cpu"] / wall, 2),
    }


def _quantiles(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    values = sorted(values)
    return {
        "p50": round(statistics.median(values), 2),
        "p99": round(values[max(0, int(len(values) * 0.99) - 1)], 2),
    }


def _stages(rows: list[tuple[int, int, int]]) -> dict[str, object]:
    """Split each row's latency at the hand-over and the GUI thread's take-over."""
    from bisect import bisect_left, bisect_right

    pushes = sorted(p for p in _pushed if p[1] >= 0)  # updates that brought effects
    push_at = [t for t, _ in pushes]
    firsts = [f for _, f in pushes]
    tail, queue, insert = [], [], []
    for seq, written, shown in rows:
        i = bisect_right(firsts, seq) - 1  # the update that carried this effect
        if i < 0:
            continue
        j = bisect_left(_drained, push_at[i])
        if j >= len(_drained):
            continue
        tail.append((push_at[i] - written) / 1e6)
        queue.append((_drained[j] - push_at[i]) / 1e6)
        insert.append((shown - _drained[j]) / 1e6)
    return {
        "tail_ms": _quantiles(tail),
        "queue_ms": _quantiles(queue),
        "insert_ms": _quantiles(insert),
    }


def main() -> None:
    path, n, burst = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    _instrument()
    app, window, view = open_in_app(path)
    rows: list[tuple[int, int, int]] = []  # (effect, written ns, row inserted ns)
    latencies: list[float] = []
    marks: dict[str, float] = {}
    gaps = {"max": 0.0, "last": time.monotonic(), "on": False}

    def rows_inserted(_parent, first: int, last: int) -> None:
        now = time.monotonic_ns()
        if 0 < len(latencies) < n:
            marks["timed_inserts"] = marks.get("timed_inserts", 0) + 1
        doc = view.live.doc
        for step in range(first, last + 1):
            effect = view.session.timeline.effect_of[step]
            if effect < 0:
                continue
            written = int(doc.result(effect)[2:])
            if effect < n:
                latencies.append((now - written) / 1e6)
                rows.append((effect, written, now))
            elif effect == n:
                marks["burst_start"] = written / 1e9
        if last + 1 >= n + burst:
            marks["burst_done"] = now / 1e9
            app.quit()

    clocks = {"gui": time.thread_time(), "proc": time.process_time()}
    timed_cpu: dict[str, float] = {}  # the GUI thread's CPU at the first and last timed row

    def tick() -> None:
        now = time.monotonic()
        if gaps["on"]:
            gaps["max"] = max(gaps["max"], now - gaps["last"] - 0.005)
        gui, proc = time.thread_time(), time.process_time()
        if 0 < len(latencies) < n:  # the timed rows: what each stall of the loop was
            _stall(now - gaps["last"], gui - clocks["gui"], proc - clocks["proc"])
            timed_cpu.setdefault("first", gui)
        elif len(latencies) >= n:
            timed_cpu.setdefault("last", gui)
        clocks["gui"], clocks["proc"] = gui, proc
        gaps["last"] = now
        gaps["on"] = len(latencies) >= n  # measure stalls during the burst

    view.model.rowsInserted.connect(rows_inserted)
    ticker = QTimer(interval=5)
    ticker.timeout.connect(tick)
    ticker.start()
    QTimer.singleShot(300, lambda: print("ready", flush=True))
    QTimer.singleShot(240_000, app.quit)  # bounded
    wall, cpu, proc = time.monotonic(), time.thread_time(), time.process_time()
    app.exec()
    gui_cpu = time.thread_time() - cpu
    gui_busy = gui_cpu / (time.monotonic() - wall)
    others_cpu = time.process_time() - proc - gui_cpu
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
                **_stages(rows),
                **_stall_summary(),
                "gui_busy": round(gui_busy, 2),
                "gui_cpu_s": round(gui_cpu, 2),
                "timed_rows_gui_cpu_s": round(timed_cpu["last"] - timed_cpu["first"], 3)
                if len(timed_cpu) == 2
                else None,
                "timed_rows_inserts": int(marks.get("timed_inserts", 0)),
                "other_threads_cpu_s": round(others_cpu, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
