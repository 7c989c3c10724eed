"""PySide6's check of every newly imported module, answered without reading its source.

Why: once PySide6 is imported, its ``__feature__`` support (``from __feature__ import
snake_case``, which switches the Qt names a module sees) asks, for each module imported
after it, whether that module uses PySide6, by reading the module's whole source file
and looking for the text "PySide6" (shibokensupport's ``feature._mod_uses_pyside``). That
read is a stat, an open, a read and a decode per module: about 130 of this app's modules
before a run's first rows (10-25 ms) and the plot library's 150 on the thread importing it
while the window waits for the interpreter lock. The answer only chooses a module's
default selection, "no feature" (it uses PySide6) or "ignore this module" (it does not);
no module of this app or its libraries selects a feature, so both mean the plain Qt
names, and every module is given "no feature" without a read. A module that does import
``__feature__`` is still switched: that import sets its selection itself.
"""

from __future__ import annotations

import sys
from types import ModuleType


def _uses_pyside(_module: ModuleType) -> bool:
    return True


def skip_source_reads() -> bool:
    """Answer PySide6's per-module check without reading sources; False when this PySide6
    has no such check (the app then works as before, paying the reads)."""
    feature = sys.modules.get("PySide6.support.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        return False
    feature._mod_uses_pyside = _uses_pyside  # type: ignore[attr-defined]
    return True
