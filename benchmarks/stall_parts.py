"""What the GUI thread was doing in its longest stalls: gui_probe.py's ``--stall-parts``.

A thread samples the GUI thread's Python stack every millisecond while the run opens and
its plot is built; the stall probe keeps every gap between its ticks. For the longest
gaps, the samples that fall inside name the handler (the outermost frame of the app
below the event loop) and the innermost frame of the app or pyqtgraph: where the turn
went. A sample is taken when the sampler gets the interpreter lock, so a gap whose GUI
CPU is much lower than its wall time and whose samples are few was mostly a wait for the
lock (the loader thread) or for a core; ``lock_wait_ms`` is how late the sampler itself
woke on average within the gap (the same wait, seen from another thread).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from typing import Any

OURS = ("loom_desktop", "loom_core", "pyqtgraph")
IDLE = ("wait", "sleep", "select", "get", "poll", "_wait_for_tstate_lock")


def _name(frame: Any) -> str:
    short = "/".join(frame.f_code.co_filename.rsplit("/", 2)[-2:])
    return f"{short}:{frame.f_code.co_name}:{frame.f_lineno}"


def _where(frame: Any) -> tuple[str, str]:
    """(outermost app frame, innermost app or pyqtgraph frame) of a stack; the probe's
    own line when none (its event loop: Qt's C++ or a wait for the interpreter lock)."""
    names, probe = [], _name(frame)
    while frame is not None:
        if any(part in frame.f_code.co_filename for part in OURS):
            names.append(_name(frame))
        frame = frame.f_back
    if not names:
        return (probe, probe)
    return (names[-1], names[0])


def _busy(frames: dict[int, Any], skip: set[int]) -> str:
    """The other threads that were in Python code, not waiting: who may hold the lock."""
    busy = sorted(
        _name(f)
        for ident, f in frames.items()
        if ident not in skip and f.f_code.co_name not in IDLE
    )
    return " | ".join(busy) or "-"


class Sampler:
    """Samples the calling (GUI) thread's stack from a daemon thread until ``stop``."""

    def __init__(self, period: float = 0.001) -> None:
        self.target = threading.get_ident()
        self.wall_minus_perf = time.time() - time.perf_counter()  # to place a gap in time
        self.period = period
        # (time, late, (handler, inner), the other threads that were busy)
        self.samples: list[tuple[float, float, tuple[str, str], str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        due = time.perf_counter()
        skip = {self.target, threading.get_ident()}
        while not self._stop.is_set():
            due += self.period
            time.sleep(max(0.0, due - time.perf_counter()))
            now = time.perf_counter()
            frames = sys._current_frames()
            frame = frames.get(self.target)
            if frame is not None:
                self.samples.append((now, now - due, _where(frame), _busy(frames, skip)))
            due = max(due, now)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def report(
    gaps: list[tuple[float, float, float]], sampler: Sampler, start: float, top: int = 6
) -> list[dict]:
    """The ``top`` longest gaps (start, end, GUI CPU ms) with what their samples show;
    ``at_s`` is the gap's start in seconds from ``start`` (the process's start)."""
    out = []
    for begin, end, cpu in sorted(gaps, key=lambda g: g[0] - g[1])[:top]:
        inside = [s for s in sampler.samples if begin <= s[0] <= end]
        handlers = Counter(s[2][0] for s in inside)
        inner = Counter(s[2][1] for s in inside)
        others = Counter(s[3] for s in inside)
        late = [s[1] for s in inside]
        out.append(
            {
                "at_s": round(begin + sampler.wall_minus_perf - start, 3),
                "wall_ms": round((end - begin) * 1000, 1),
                "gui_cpu_ms": round(cpu, 1),
                "samples": len(inside),
                "lock_wait_ms": round(1000 * sum(late) / len(late), 2) if late else None,
                "handlers": handlers.most_common(3),
                "inner": inner.most_common(4),
                "other_threads": others.most_common(3),
            }
        )
    return out
