"""Colours shared by the timeline, the step list and the context view."""

from __future__ import annotations

from PySide6.QtGui import QColor

from loom_core.views.timeline import KIND_NAMES

KIND_COLORS = {  # by kind as shown (KIND_NAMES: a user prompt is "prompt")
    "prompt": "#7e57c2",
    "model": "#1e88e5",
    "tool": "#43a047",
    "human": "#fb8c00",
    "time": "#90a4ae",
    "memory": "#8d6e63",
    "compact": "#6d4c41",
    "edit": "#d81b60",
    "sample": "#5c6bc0",
    "choose": "#5c6bc0",
    "critic": "#00897b",
    "other": "#9e9e9e",
}
ERROR_COLOR = "#e53935"
BLOCKED_COLOR = "#ff6f00"
SHIELD_COLOR = "#8e24aa"
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
