"""Colours shared by the timeline, the step list and the context view (the kinds' and the
markers' come from :mod:`loom_core.views.palette`, which the exported HTML page uses too)."""

from __future__ import annotations

from PySide6.QtGui import QColor

from loom_core.views.palette import BLOCKED_COLOR, ERROR_COLOR, KIND_COLORS, SHIELD_COLOR
from loom_core.views.timeline import KIND_NAMES

__all__ = [
    "BLOCKED_COLOR",
    "DEPTH_COLORS",
    "ERROR_COLOR",
    "KIND_COLORS",
    "NEW_BG",
    "NEW_RULE",
    "SHIELD_COLOR",
    "kind_color",
    "severity_color",
]
NEW_BG = "#fff6c7"
NEW_RULE = "#f9a825"
SEVERITY_COLORS = {"high": "#d32f2f", "warn": "#f9a825"}  # doctor findings
OTHER_SEVERITY = "#78909c"
DEPTH_COLORS = ("#26a69a", "#ab47bc", "#ffa726", "#8d6e63")


_KIND_QCOLORS: list[QColor] = []


def kind_color(code: int) -> QColor:
    """The colour of a step kind code (one QColor per kind: views ask on every paint)."""
    if not _KIND_QCOLORS:
        _KIND_QCOLORS.extend(QColor(KIND_COLORS[k]) for k in KIND_NAMES)
    return _KIND_QCOLORS[code]


def severity_color(severity: str) -> str:
    """A doctor finding's colour: the findings table and the timeline's flags agree."""
    return SEVERITY_COLORS.get(severity, OTHER_SEVERITY)
