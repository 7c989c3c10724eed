"""A foreign run (formats.foreign.RunBuilder) in every place the views read it.

The recorded input messages replace the rebuilt context, a producer without content capture
is said to be so, the raw view shows the source record beside the loom effect, and the run
can be forked; its loom trace is one loom-harness verifies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loom_core.formats.document import Document
from loom_core.formats.foreign import RunBuilder
from loom_core.formats.save import save_document
from loom_core.views.timeline import build_timeline
from loom_desktop.document.context_html import ViewState, step_html
from loom_desktop.widgets.context_view import ContextView
from tests.core.fork.checks import loom_ok

SENT = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": [{"type": "text", "content": "list the files"}]},
]
SENT_2 = [
    *SENT,
    {
        "role": "assistant",
        "content": [{"type": "tool_call", "id": "c1", "name": "ls", "arguments": {"d": "."}}],
    },
    {"role": "tool", "content": [{"type": "tool_call_response", "id": "c1", "response": "a b"}]},
]


def _run(content: bool = True) -> Document:
    b = RunBuilder(model="gpt-x", system="be brief")
    b.add_episode("list the files")
    call = {"id": "c1", "name": "ls", "input": {"d": "."}}
    m0 = b.add_model("", [call], {"input_tokens": 10, "output_tokens": 3})
    t = b.add_tool("ls", "c1", "a b")
    m1 = b.add_model("two files", [], {"input_tokens": 20, "output_tokens": 4})
    b.extra["records"] = {t: {"name": "execute_tool ls", "attributes": {"gen_ai.tool.name": "ls"}}}
    if content:
        b.extra["inputs"] = {m0: SENT, m1: SENT_2}
    else:
        b.extra["content_recorded"] = False
    return b.document("run.otlp.json", "otlp")


def _model_steps(doc: Document) -> list[int]:
    tl = build_timeline(doc)
    return [s for s in range(len(tl)) if tl.kind_name(s) == "model"]


def test_recorded_inputs_replace_the_rebuilt_context() -> None:
    doc = _run()
    tl = build_timeline(doc)
    first, second = _model_steps(doc)
    page = step_html(tl, second, ViewState())
    assert "as recorded by the producer" in page
    assert "(4; 2 new)" in page  # the first call was sent the first two
    assert "list the files" in page and "a b" in page and "→ ls" in page
    assert "(2; 2 new)" in step_html(tl, first, ViewState())


def test_no_content_captured_is_said() -> None:
    doc = _run(content=False)
    tl = build_timeline(doc)
    page = step_html(tl, _model_steps(doc)[0], ViewState())
    assert "Not recorded" in page and "content capture is opt-in" in page
    assert "Messages the model was sent" not in page


def test_raw_view_shows_the_source_record(qtbot: Any) -> None:
    doc = _run()
    tl = build_timeline(doc)
    view = ContextView()
    qtbot.addWidget(view)
    tool = next(s for s in range(len(tl)) if tl.kind_name(s) == "tool:ls")
    view.show_step(tl, tool)
    raw = json.loads(view.raw_text())
    assert raw["source record"]["attributes"] == {"gen_ai.tool.name": "ls"}
    assert raw["as a loom effect"]["kind"] == "tool:ls"


def test_a_foreign_run_is_a_whole_run_and_loom_verifies_its_trace(tmp_path: Path) -> None:
    doc = _run()
    assert doc.is_foreign and doc.is_whole_run and doc.format == "otlp"
    out = tmp_path / "run.loom.json"
    save_document(doc, out)
    run = loom_ok(out)
    assert [e.kind for e in run.log] == ["model", "tool:ls", "model"]


@pytest.mark.parametrize("fmt", ["journal", "wirelog", "exchanges"])
def test_loom_formats_are_not_foreign(fmt: str) -> None:
    doc = _run()
    same = Document(path="x", format=fmt, header=doc.header, effects=doc.effects)
    assert not same.is_foreign and not same.is_whole_run


def test_fork_accepts_a_foreign_run_at_a_model_step(qtbot: Any) -> None:
    from types import SimpleNamespace

    from loom_desktop.features.fork.actions import ForkActions

    doc = _run()
    tl = build_timeline(doc)
    view = SimpleNamespace(doc=doc, session=SimpleNamespace(timeline=tl), complete=True)
    actions = ForkActions.__new__(ForkActions)  # why_not reads only the view it is given
    second = _model_steps(doc)[1]
    assert ForkActions.why_not(actions, view, second) == (2, "")
