"""An OpenTelemetry trace file from a real producer opens in the window like any run.

OpenInference around the real ``openai`` client records the agent (tests/core/formats/
otlp_agents.py); the window's step list, the context view (the messages as the producer
recorded them) and the raw view (the span beside the loom effect) are checked, and the
window is rendered offscreen so a person can look at it (``LOOM_OTLP_SHOT=path.png``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from loom_desktop.main_window import MainWindow
from tests.core.formats.otlp_agents import run_agent
from tests.core.formats.otlp_producers import write_jsonl


def _finished(path: Path) -> Path:
    old = path.stat().st_mtime - 3600  # not being written: a plain tab, not a live one
    os.utime(path, (old, old))
    return path


def test_otlp_run_in_the_window(qtbot, window: MainWindow, tmp_path: Path, open_and_wait) -> None:
    rec = run_agent("openinference-openai")
    path = _finished(write_jsonl(tmp_path / "agent.otlp.jsonl", [[s] for s in rec.spans]))
    view = open_and_wait(window, path)
    assert view.doc.format == "otlp" and view.live is None
    kinds = [e.kind for e in view.doc.effects]
    assert kinds.count("model") == len(rec.requests)
    assert view.model.rowCount() == len(view.session.timeline)

    tl = view.session.timeline
    last_model = max(s for s in range(len(tl)) if tl.kind_name(s) == "model")
    view.session.set_step(last_model)
    view.flush_render()
    page = view.context_view.browser.toPlainText()
    assert "Schweizerhof" in page  # the untraced tool's result, as the last call was sent it
    assert "You are a careful travel agent." in page

    tool = next(s for s in range(len(tl)) if tl.kind_name(s) == "tool:book")
    view.session.set_step(tool)
    view.flush_render()
    raw = json.loads(view.context_view.raw_text())
    assert raw["source record"]["attributes"]["tool.name"] == "book"
    assert raw["as a loom effect"]["kind"] == "tool:book"

    view.session.set_step(last_model)
    view.flush_render()
    shot = os.environ.get("LOOM_OTLP_SHOT")
    image = window.grab()
    assert not image.isNull() and image.width() > 0
    if shot:
        image.save(shot)
