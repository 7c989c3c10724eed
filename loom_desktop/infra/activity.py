"""Background work inside the window's process pauses while the user moves through a run.

Why: a worker thread of this process (the text filter's index build, a second of CPU per
100,000 steps, started right after a big run's plot is shown) runs Python, and Python
runs one thread at a time: each step move on the GUI thread waited for the interpreter
lock behind it. Measured with ``benchmarks/gui_probe.py`` at 100,000 effects, the other
threads of the process took 1.1-1.2 s of CPU during the 400 timed step moves with the
build running, 0.25-0.28 s without it, and a move's p99 in the process's CPU was 33-43 ms
against the GUI thread's own 10-14 ms. A lower OS priority cannot help here (the lock, not
a core, is what the GUI thread waits for), so such work asks :func:`wait_quiet` between
its chunks and sleeps (the lock released) until the user has left the window alone for
:data:`QUIET_S`: no step moved, the step list not scrolled, the plot not panned or
zoomed. A product choice: the window a user drives comes first; the work finishes when
they pause. Processes started beside the window yield through their OS
priority instead (:mod:`loom_core.cli.background`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

QUIET_S = 0.3  # the user is "driving" until this long after their last move
NAP_S = 0.05  # the longest sleep between looks (a cancel is seen within it)


class Activity:
    """When the user last moved a step, scrolled a list or panned a plot, in any tab; read
    from any thread.

    One float, written by the GUI thread and read by workers: an assignment is atomic
    under the interpreter lock, and a stale read costs at most one chunk of work.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last = -float("inf")
        self.waits = 0  # how many times a worker paused for the user (tests look at it)

    def touch(self, *_args: object) -> None:
        """The user moved (connected to each tab's ``step_changed``, its list's scroll bar
        and its plot's range changes made by the user)."""
        self.last = self.clock()

    def wait_quiet(self, cancelled: Callable[[], bool]) -> bool:
        """Sleep until the user has been still for :data:`QUIET_S`; ``cancelled()`` after.

        Shaped as a ``cancelled`` callable so that loops which already ask one between
        chunks pause for the user with no change of their own.
        """
        paused = False
        while not cancelled():
            left = self.last + QUIET_S - self.clock()
            if left <= 0:
                return False
            if not paused:
                paused, self.waits = True, self.waits + 1
            time.sleep(min(left, NAP_S))
        return True


USER = Activity()  # the one user of this window's process
