"""Where a far jump's GUI-thread CPU goes: gui_probe.py's ``--jump-parts``.

The same random far jumps, in one window, with one part of the window left out at a
time: the context view not rendered, the step list's rows not painted, the plot not
painted. A part's share is the median jump with it less the median jump without it.
The modes alternate in rounds, so a change in the machine's load falls on all of them.
Qt paints in C++, where a Python profiler sees nothing: leaving a part out is the
measurement that names the parts of a jump on a loaded two-core machine.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

ROUNDS, PER_ROUND = 5, 30


def _modes(view: Any) -> dict[str, tuple[Callable[[], None], Callable[[], None]]]:
    """name -> (leave the part out, put it back)."""
    cv = view.context_view
    list_port, plot_port = view.table.viewport(), view.timeline_widget.viewport()

    def nothing() -> None:
        pass

    def no_context() -> None:
        cv.show_step = lambda *_a: None  # an instance attribute hides the method

    def context_back() -> None:
        del cv.show_step

    return {
        "whole": (nothing, nothing),
        "no_context": (no_context, context_back),
        "no_list_paint": (
            lambda: list_port.setUpdatesEnabled(False),
            lambda: list_port.setUpdatesEnabled(True),
        ),
        "no_plot_paint": (
            lambda: plot_port.setUpdatesEnabled(False),
            lambda: plot_port.setUpdatesEnabled(True),
        ),
    }


def jump_parts(app: Any, view: Any) -> dict[str, float]:
    """Median GUI-thread CPU of a far jump in each mode, and each part's share, in ms."""
    n = view.session.count
    rng = random.Random(2)
    cpu: dict[str, list[float]] = {}
    for _round in range(ROUNDS):
        for name, (leave_out, put_back) in _modes(view).items():
            leave_out()
            for step in [rng.randrange(n) for _ in range(PER_ROUND)]:
                start = time.thread_time()
                view.session.set_step(step)
                view.flush_render()
                app.processEvents()
                cpu.setdefault(name, []).append((time.thread_time() - start) * 1000)
            put_back()
            app.processEvents()  # what its absence left undrawn, outside the timing
    med = {name: statistics.median(values) for name, values in cpu.items()}
    out = {f"jump_cpu_ms_p50_{name}": value for name, value in med.items()}
    for part in ("context", "list_paint", "plot_paint"):
        out[f"jump_share_ms_{part}"] = med["whole"] - med[f"no_{part}"]
    return out
