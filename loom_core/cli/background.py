"""``python -m loom_core.cli.background COMMAND ARGS…``: a command at a lower CPU priority.

Why: when a big run opens, the desktop starts two processes that each load the whole run
again, for a second or more of CPU: the checksum check and the run library's indexing.
They ran at the window's priority, so on a two-core machine they took the cores from it
just when the user starts scrubbing: a step move's p99 was 29 ms end to end at 100,000
effects against 14 ms of the GUI thread's own CPU. Started through this module, such a
process first lowers its own priority (``os.nice``; where there is none, as on Windows,
it runs as before), so the window wins the CPU while both want it and the work still
finishes whenever the window is idle. The proxy and the demo agent are never started
this way: their latency is what the user waits for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

NICENESS = 10  # added to the process's niceness: the scheduler favours the window


def lower_priority() -> None:
    """Make this process yield the CPU to normal-priority ones, where the OS can."""
    if hasattr(os, "nice"):
        try:
            os.nice(NICENESS)
        except OSError:
            pass  # not allowed here: run at the normal priority


def main(argv: Sequence[str] | None = None) -> int:
    lower_priority()
    from loom_core.cli.entry import main as command

    return command(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
