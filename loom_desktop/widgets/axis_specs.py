"""The step axis's draw specs (its line, ticks and labels), worked out for a bottom axis.

Why not pyqtgraph's ``AxisItem.generateDrawSpecs``: it serves every orientation, grid and
style, and every pan of the timeline redraws the step axis through it. It made two
``Point`` objects per tick (about 80 ticks in a 400-step view) and asked the painter to
measure every label again, about 1.4 ms of each far jump's pan. This gives the same specs
for the step axis's one configuration (at the bottom, no grid, ticks and labels shown,
no fixed ticks): the ticks are plain ``QPointF`` pairs and a label's size is measured
once per font. :func:`fits` says when it applies; otherwise pyqtgraph's is used.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainter, QPen

_LABEL_FLAGS = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextDontClip
_SIZES_KEPT = 4096  # labels measured per font before the cache starts again

Specs = tuple[Any, list[Any], list[Any]]


def fits(axis: pg.AxisItem) -> bool:
    """Whether :func:`bottom_specs` gives ``axis`` what pyqtgraph's would."""
    style = axis.style
    return bool(
        axis.orientation == "bottom"
        and axis.grid is False
        and axis._tickLevels is None  # noqa: SLF001 - pyqtgraph's fixed ticks
        and style["tickAlpha"] is None
        and tuple(style["stopAxisAtTick"]) == (False, False)
        and style["showValues"]
    )


class LabelSizes:
    """A label's measured size (as pyqtgraph measures it: centred in a 100 px square, 0.8
    of its height), kept per font: a pan shows mostly labels measured before."""

    def __init__(self) -> None:
        self._font = ""
        self._sizes: dict[str, tuple[float, float]] = {}

    def of(self, painter: QPainter) -> dict[str, tuple[float, float]]:
        """The sizes measured in ``painter``'s font, by text: (width, height)."""
        font = painter.font().key()
        if font != self._font or len(self._sizes) > _SIZES_KEPT:
            self._font, self._sizes = font, {}
        return self._sizes


def _size(
    painter: QPainter, known: dict[str, tuple[float, float]], text: str
) -> tuple[float, float]:
    """``text``'s size from ``known``, measured (and kept) when it is not there."""
    size = known.get(text)
    if size is None:
        rect = painter.boundingRect(QRectF(0, 0, 100, 100), Qt.AlignmentFlag.AlignCenter, text)
        size = known[text] = (rect.width(), rect.height() * 0.8)
    return size


def bottom_specs(axis: pg.AxisItem, painter: QPainter, sizes: LabelSizes) -> Specs | None:
    """``axis``'s (line, ticks, labels), as ``AxisItem.generateDrawSpecs`` gives them for
    an axis :func:`fits` accepts (None where it gives None: the axis has no length)."""
    style = axis.style
    if style["tickFont"] is not None:
        painter.setFont(style["tickFont"])
    bounds = axis.mapRectFromParent(axis.geometry())
    top = bounds.top()
    span = (pg.Point(bounds.left() - 1.0, top + 1.0), pg.Point(bounds.right() + 1.0, top + 1.0))
    ends = [axis.mapToDevice(point) for point in span]
    if None in ends:
        return None
    pixels = pg.Point(ends[1] - ends[0]).length()
    if pixels == 0:
        return None
    levels = axis.tickValues(axis.range[0], axis.range[1], pixels)
    low, high = axis.range
    scale = bounds.width() / (high - low) if high != low else 1.0
    offset = low * scale if high != low else 0.0
    x_min, x_max = sorted((low * scale - offset, high * scale - offset))
    positions: list[list[float | None]] = []
    ticks: list[Any] = []
    for i, (_spacing, values) in enumerate(levels):
        pen = _level_pen(axis, i)
        end = top + style["tickLength"] / (i * 0.5 + 1.0)
        at: list[float | None] = []
        for v in values:
            x = v * scale - offset
            if x < x_min or x > x_max:
                at.append(None)
                continue
            at.append(x)
            ticks.append((pen, QPointF(x, top), QPointF(x, end)))
        positions.append(at)
    axis_spec = (axis.pen(), span[0], span[1])
    labels = _labels(axis, painter, sizes, levels, positions, pixels, top)
    return axis_spec, ticks, labels


def _level_pen(axis: pg.AxisItem, level: int) -> QPen:
    """The ticks' pen of a level: fainter with each level, as pyqtgraph draws them."""
    pen = axis.tickPen()
    if pen.brush().style() == Qt.BrushStyle.SolidPattern:
        pen = QPen(pen)
        color = pen.color()
        color.setAlpha(int(255 / (level + 1)))
        pen.setColor(color)
    return pen


def _labels(
    axis: pg.AxisItem,
    painter: QPainter,
    sizes: LabelSizes,
    levels: list[Any],
    positions: list[list[float | None]],
    pixels: float,
    top: float,
) -> list[Any]:
    """The labels' specs, level by level until they would crowd the axis (pyqtgraph's
    ``textFillLimits``); sets the axis's height for them as pyqtgraph does."""
    style = axis.style
    below = top + max(0, style["tickLength"]) + style["tickTextOffset"][1]
    room = axis.boundingRect()
    measured: list[tuple[float, float]] = []
    specs: list[Any] = []
    tallest = 0.0
    known = sizes.of(painter)
    for i in range(min(len(levels), style["maxTextLevel"] + 1)):
        spacing, values = levels[i]
        strings = axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing)
        if not len(strings):
            continue
        shown = [(s, x) for s, x in zip(strings, positions[i], strict=False) if x is not None]
        level = [(s, x, _size(painter, known, s)) for s, x in shown]
        measured += [size for _s, _x, size in level]
        width = float(np.sum([w for w, _h in measured])) if measured else 0.0
        height = float(np.max([h for _w, h in measured])) if measured else 0.0
        if i > 0 and any(
            len(specs) >= count and width / pixels >= limit
            for count, limit in style["textFillLimits"]
        ):
            break
        tallest = height
        for s, x, (w, h) in level:
            rect = QRectF(x - w / 2.0, below, w, h)
            if room & rect == rect:
                specs.append((rect, _LABEL_FLAGS, s))
    if measured:  # an empty run's axis keeps the room its first labels will take
        axis._updateMaxTextSize(tallest)  # noqa: SLF001 - what pyqtgraph's specs do too
    return specs
