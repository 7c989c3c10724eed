"""A feed of the plot paints it once, a live run's first steps included.

A full paint of the plot is 10-20 ms of the GUI thread, and a live run's rows wait for
it (issue 24's live tail). Three things asked for a second paint right after the one a
feed asked for: the views' auto-range, worked out by pyqtgraph as the scene prepared the
paint; the legend's entries, laid out by Qt in a later turn; and the axes' tick texts,
measured while painting (an empty run's "100" becoming its first steps' "5"), each of
which changed the layout or a range after the paint. The first feed of an empty plot
painted three times, every later one twice.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QEvent, QObject

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from loom_desktop.widgets.timeline import TimelineWidget
from tests.core.diff.tracegen import tool, write

SETTLE_MS = 300  # after the first paint: the turns a second one would come in (counted, not timed)


class _Paints(QObject):
    """Counts the paint events of a widget's viewport."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def test_a_growing_run_paints_the_plot_once_per_feed(qtbot, tmp_path: Path) -> None:
    doc = load(
        write(tmp_path / "run.loom.json", [tool("tick", f"t={k}", f"c{k}", {}) for k in range(12)])
    )
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(1400, 250)
    widget.show()
    widget.set_timeline(build_timeline(replace(doc, effects=[])))  # a live tab starts empty
    qtbot.wait(SETTLE_MS)
    paints = _Paints()
    widget.viewport().installEventFilter(paints)
    counts = []
    for n in (3, 8, 12):  # the first steps come (the legend, the axes' texts), then more
        paints.count = 0
        widget.set_timeline(build_timeline(replace(doc, effects=doc.effects[:n])))
        widget.set_cursor(n - 1)
        qtbot.waitUntil(lambda: paints.count > 0, timeout=10_000)
        qtbot.wait(SETTLE_MS)
        counts.append(paints.count)
    assert counts == [1, 1, 1]
