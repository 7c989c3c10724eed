"""The step axis's draw specs are pyqtgraph's: the same ticks, labels and places."""

from __future__ import annotations

import random
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtGui import QImage, QPainter

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from loom_desktop.widgets.axis_specs import fits
from loom_desktop.widgets.timeline import TimelineWidget
from tests.core.diff.tracegen import model, tool, write


def _plain(specs: object) -> object:
    """Specs as comparable values (pens by colour and width, points and rects as tuples)."""
    if specs is None:
        return None
    (pen, a, b), ticks, labels = specs  # type: ignore[misc]
    return (
        (pen.color().name(), (a.x(), a.y()), (b.x(), b.y())),
        [(p.color().rgba(), p.widthF(), (s.x(), s.y()), (e.x(), e.y())) for p, s, e in ticks],
        [(r.getRect(), int(f), t) for r, f, t in labels],
    )


def test_the_step_axis_draws_what_pyqtgraph_would(qtbot, tmp_path: Path) -> None:
    steps = []
    for i in range(300):
        steps += [model(f"m{i}", t_in=10 + i % 7, n=i), tool("read", "ok", f"c{i}", {"i": i})]
    tl = build_timeline(load(write(tmp_path / "run.loom.json", steps)))
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(900, 260)
    widget.show()
    widget.set_timeline(tl)
    axis = widget.axis
    assert fits(axis)
    image = QImage(1000, 60, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    rng = random.Random(4)
    labelled = 0
    try:
        for _ in range(60):
            width = rng.choice([3, 12, 40, 150, 400, 2000])
            start = rng.uniform(-width, len(tl))
            widget.setXRange(start, start + width, padding=0)
            qtbot.wait(1)
            ours = _plain(axis.generateDrawSpecs(painter))
            theirs = _plain(pg.AxisItem.generateDrawSpecs(axis, painter))
            assert ours == theirs, (start, width)
            labelled += bool(ours and ours[2])
    finally:
        painter.end()
    assert labelled > 40  # most views show labels (a view far past the run's end has none)
