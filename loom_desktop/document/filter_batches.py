"""Matches of a running filter, handed to the GUI thread in a few batches.

Why: the filter worker finds matches a chunk of the run at a time (hundreds of
chunks in a million-step run); one queued signal and one row insert per chunk
would keep the GUI thread busy with bookkeeping. The first matches go at once (the
list shows them while the rest is searched), later ones at most every
``INTERVAL_S``; whatever is left arrives with the task's final result.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable

INTERVAL_S = 0.05


class FilterBatches:
    """Called on the worker thread with each batch; calls ``emit`` with coalesced ones."""

    def __init__(self, emit: Callable[[object], None]) -> None:
        self._emit = emit
        self._pending = array("i")
        self._last: float | None = None

    def __call__(self, batch: array[int]) -> None:
        self._pending.extend(batch)
        now = time.monotonic()
        if self._last is None or now - self._last >= INTERVAL_S:
            self._emit(self._pending)
            self._pending, self._last = array("i"), now
