"""The colours of step kinds and markers, shared by the app and the exported HTML page.

Why in the core: the page (``loom_core.export``) draws the same timeline as the app's
window and must say the same thing with the same colours; ``loom_desktop.style`` takes
these and adds the window's own.
"""

from __future__ import annotations

from loom_core.views.timeline import F_BLOCKED, F_DENIED, F_ERROR, F_SHIELD, KIND_NAMES

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
assert set(KIND_COLORS) == set(KIND_NAMES)

ERROR_COLOR = "#e53935"
BLOCKED_COLOR = "#ff6f00"
SHIELD_COLOR = "#8e24aa"

# the timeline's markers: (flag bit, legend words, the glyph the step list and the page
# draw, colour); ◆ a denial, ★ any other shield decision
MARKS = (
    (F_ERROR, "error", "✖", ERROR_COLOR),
    (F_BLOCKED, "blocked call", "▼", BLOCKED_COLOR),
    (F_DENIED, "denied", "◆", ERROR_COLOR),
    (F_SHIELD, "shield decision", "★", SHIELD_COLOR),
)
