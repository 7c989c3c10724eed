"""Count the tab plots' paints on the screen: what waits for the plot's first paint (the
text index, the run library) is checked against it."""

from __future__ import annotations

from typing import Any

from loom_desktop.widgets import timeline as timeline_module


def plot_paints(monkeypatch: Any) -> list[object]:
    """A list that gains an entry at every paint of any timeline plot on the screen from
    now on (not its paints off screen while it is built: ``grab`` before it is placed)."""
    painted: list[object] = []
    paint = timeline_module.TimelineWidget.paintEvent

    def counted(widget: Any, event: Any) -> None:
        if widget.isVisible():
            painted.append(widget)
        paint(widget, event)

    monkeypatch.setattr(timeline_module.TimelineWidget, "paintEvent", counted)
    return painted
