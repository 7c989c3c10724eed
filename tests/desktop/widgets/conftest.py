"""A shown timeline widget on the bundled sample run."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from loom_desktop.widgets.timeline import TimelineWidget


@pytest.fixture
def sample_plot(qtbot, sample: Path) -> TimelineWidget:
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(900, 260)
    widget.show()
    widget.set_timeline(build_timeline(load(sample)))
    return widget
