"""What changes while a user debugs one document: the current step and the timeline.

Trace data is immutable; this small evented object holds the moving parts so
the timeline plot, the step list, the context view and the status bar stay in
step without referring to each other (napari's ``Dims.current_step`` shape).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from loom_core.views.timeline import Timeline


class Session(QObject):
    """Current step and timeline of one tab; views listen, nobody keeps copies."""

    step_changed = Signal(int)
    timeline_changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.timeline: Timeline | None = None
        self.step = 0

    @property
    def count(self) -> int:
        return len(self.timeline) if self.timeline is not None else 0

    def set_timeline(self, timeline: Timeline) -> None:
        """Swap in a (bigger or complete) timeline, keeping the current step if it still exists."""
        self.timeline = timeline
        self.step = min(self.step, max(0, len(timeline) - 1))
        self.timeline_changed.emit(timeline)
        self.step_changed.emit(self.step)

    def set_step(self, step: int) -> None:
        """Move to ``step`` (clamped); emits only when it actually moves."""
        if not self.count:
            return
        step = max(0, min(int(step), self.count - 1))
        if step != self.step:
            self.step = step
            self.step_changed.emit(step)

    def move(self, delta: int) -> None:
        self.set_step(self.step + delta)
