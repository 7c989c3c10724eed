"""Keep the cyclic collector off open runs' objects, and give them back when a tab closes.

Why freeze at all: a loaded run is a long-lived heap the collector would otherwise
walk on every full collection, which shows up as a stall while scrubbing.
``gc.freeze()`` moves every object it tracks into a permanent generation it never
walks. Why thaw: permanent means never collected -- whatever becomes garbage in a
reference cycle afterwards (a closed tab's widgets and run, or anything else that
was alive at the moment of the freeze) would stay for the life of the process, so
a long session of opening and closing tabs grew without bound. So each closed run
thaws the frozen objects, collects once (the closed tab's cycles go), and freezes
again while other runs are open; with none open nothing stays frozen.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

_open = 0  # loaded runs whose objects are frozen (GUI thread only)
_collector: QTimer | None = None
COLLECT_EVERY_MS = 500


def collect_on_gui_thread(app: QObject) -> None:
    """Turn automatic collection off and collect from a GUI-thread timer instead.

    Why: the collector runs in whichever thread happens to allocate past its threshold
    -- a load worker, the journal tailer. If a cycle it frees holds a Qt object, that
    object is destroyed on the wrong thread: the fuzz driver's long window runs died of
    it (a segfault with the collector on the tailer's thread; a deadlock with it on a
    pool thread destroying a QObject under Qt's lock while the GUI thread held the GIL).
    pyqtgraph's GarbageCollector answers this the same way: the same thresholds,
    checked on the GUI thread only. Idempotent.
    """
    global _collector
    if _collector is not None:
        return
    gc.disable()
    _collector = QTimer(app)
    _collector.timeout.connect(collect_due)
    _collector.start(COLLECT_EVERY_MS)


def collect_due() -> int:
    """Collect the generations whose counts passed their thresholds (the collector's own
    rule, applied here); returns the highest generation collected, -1 for none."""
    counts, limits = gc.get_count(), gc.get_threshold()
    due = [g for g in range(3) if counts[g] > limits[g]]
    if not due:
        return -1
    gc.collect(due[-1])
    return due[-1]


def hold(owner: QObject) -> None:
    """``owner`` (a tab) finished loading: freeze, and thaw once it is destroyed."""
    global _open
    _open += 1
    gc.freeze()
    owner.destroyed.connect(_released)  # a plain function: holds nothing of the tab


def _released(*_args: object) -> None:
    global _open
    _open = max(0, _open - 1)
    QTimer.singleShot(0, _collect)  # after the rest of the tab's deferred deletes


def _collect() -> None:  # GUI thread (a queued timer)
    gc.unfreeze()
    gc.collect()
    if _open:
        gc.freeze()


def frozen_runs() -> int:
    """How many open runs keep the process frozen (for tests and diagnostics)."""
    return _open
