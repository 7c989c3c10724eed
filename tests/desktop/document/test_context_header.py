"""The context view's header names a step's agent only when it has one: a tool step of an
Inspect log or a Claude Code session's main agent showed a bare "· agent"."""

from __future__ import annotations

from pathlib import Path

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from loom_desktop.document.context_html import ViewState, step_html
from loom_desktop.resources import sample_trace
from tests.core.formats.claude_fixtures import full_session


def _header(tl, step: int) -> str:
    page = step_html(tl, step, ViewState())
    start = page.index("<div class='hdr'>")
    return page[start : page.index("</div>", start)]


def test_no_bare_agent_for_an_unnamed_one(tmp_path: Path) -> None:
    path, _main, _sub = full_session(tmp_path / "projects")
    tl = build_timeline(load(path))
    step = next(s for s in range(len(tl)) if tl.kind_name(s) == "tool:Bash")
    assert tl.agents[tl.agent[step]] == ""
    assert "agent" not in _header(tl, step)


def test_a_named_agent_is_still_said() -> None:
    tl = build_timeline(load(sample_trace()))
    step = next(s for s in range(len(tl)) if tl.kind_name(s) == "model")
    assert "agent lead" in _header(tl, step)
