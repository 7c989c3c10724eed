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
import threading
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject, QTimer

_open = 0  # loaded runs whose objects are frozen (GUI thread only)
_collector: QTimer | None = None
COLLECT_EVERY_MS = 500
_loads = 0  # bulk loads running on worker threads (any thread; under _loads_lock)
_loads_lock = threading.Lock()
T = TypeVar("T")


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
    rule, applied here); returns the highest generation collected, -1 for none. Nothing
    while a bulk load runs (:func:`loading`)."""
    if _loads:
        return -1
    counts, limits = gc.get_count(), gc.get_threshold()
    due = [g for g in range(3) if counts[g] > limits[g]]
    if not due:
        return -1
    gc.collect(due[-1])
    return due[-1]


def loading(load: Callable[[], T]) -> T:
    """Run ``load`` (on a worker thread), with no collection on the GUI thread meanwhile.

    Why: a big run's load makes millions of objects that live as long as its tab. A
    collection while it runs scans every one made since the last: at 1,000,000 effects
    the GUI thread stopped for 50-360 ms at a time, the window frozen. They are all kept
    anyway, and :func:`hold` freezes them once the load ends, so nothing is lost by
    waiting; cycles that became garbage meanwhile go at the next collection (or, frozen,
    when the tab closes). Counted in ``finally``: a failed or cancelled load ends too.
    """
    global _loads
    with _loads_lock:
        _loads += 1
    try:
        return load()
    finally:
        with _loads_lock:
            _loads -= 1


def hold(owner: QObject) -> None:
    """``owner`` (a tab) finished loading: freeze, and thaw once it is destroyed."""
    global _open
    _open += 1
    gc.freeze()
    owner.destroyed.connect(_released)  # a plain function: holds nothing of the tab


def keep_imported() -> None:
    """Modules were just imported (they live as long as the process): while runs are held
    frozen, freeze these too. Else the next collection on the GUI thread walks every object
    of the import: 50-90 ms after the plot's 400 modules, while the plot was being shown."""
    if _open:
        gc.freeze()


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
