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


def _collect() -> None:
    gc.unfreeze()
    gc.collect()
    if _open:
        gc.freeze()


def frozen_runs() -> int:
    """How many open runs keep the process frozen (for tests and diagnostics)."""
    return _open
