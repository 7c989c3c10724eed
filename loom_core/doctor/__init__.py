"""Checkup of a run's context: loom-harness's findings plus stale, bloat and loops.

Public API: :func:`checkup` (a loaded document) and :func:`checkup_path`, which
return a :class:`Checkup` holding :class:`Finding` objects.
"""

from loom_core.doctor.checkup import checkup, checkup_path
from loom_core.doctor.model import (
    CONTEXT_BLOAT,
    DUPLICATE,
    ERROR_LOOP,
    HARNESS_KINDS,
    HIGH,
    OUR_KINDS,
    OVERSIZED,
    STALE,
    TOOL_LOOP,
    UNUSED,
    WARN,
    Checkup,
    Finding,
)

__all__ = [
    "checkup",
    "checkup_path",
    "Checkup",
    "Finding",
    "OVERSIZED",
    "UNUSED",
    "DUPLICATE",
    "STALE",
    "CONTEXT_BLOAT",
    "TOOL_LOOP",
    "ERROR_LOOP",
    "HARNESS_KINDS",
    "OUR_KINDS",
    "HIGH",
    "WARN",
]
