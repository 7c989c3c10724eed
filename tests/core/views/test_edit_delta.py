"""What a fork's edit changed, message by message (``loom_core.views.edit_delta``): injected,
replaced, redacted and removed messages told apart from those new since the previous call."""

from __future__ import annotations

import shutil
from pathlib import Path

from loom_core.fork.edits import Edit, MessageOp, edit_summary
from loom_core.fork.rerun import run_fork
from loom_core.formats.loader import load
from loom_core.providers.scripted import ScriptedProvider
from loom_core.views.context import build_context
from loom_core.views.edit_delta import INJECTED, NEW, REDACTED, REPLACED, delta_of_edit, frame_delta
from loom_core.views.frames import frame_at
from tests.core.fork.scenarios import proxy_run

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"
AT = 14  # the sample's reviewer call; the lead's previous call was seq 12


def branch_of(tmp_path: Path, edit: Edit, parent: Path | None = None, at: int = AT):
    parent = parent or Path(shutil.copy(SAMPLE, tmp_path / "sample.loom.json"))
    out = tmp_path / "branch.loom.json"
    run_fork(load(parent), parent, at, edit, ScriptedProvider(), out=out)
    doc = load(out)
    return doc, build_context(doc)


def test_inject_and_redact(tmp_path: Path) -> None:
    doc, index = branch_of(tmp_path, Edit(inject="be brief", redact=[13]))
    (edit,) = index.edits
    delta = delta_of_edit(index, edit)
    assert delta is not None
    # 13: the reply of seq 12, 14: the result of seq 13 (redacted), 15: the note
    assert delta.marks == {13: NEW, 14: REDACTED, 15: INJECTED}
    assert delta.was[14].text.startswith("=====") and not delta.removed
    assert delta.summary() == "injected 1 message, redacted 1 message"
    frame = frame_at(index, edit + 1)  # the first call after the edit sees the same marks
    assert frame is not None and frame.rewritten and frame_delta(frame) == delta
    assert (
        edit_summary(doc, edit, doc.result(edit))
        == "note injected, redacted 1 result(s) — “be brief”"
    )


def test_message_ops(tmp_path: Path) -> None:
    ops = [
        MessageOp("replace", 1, {"role": "user", "content": "Fix CI please."}),
        MessageOp("delete", 3),
        MessageOp("insert", 2, {"role": "user", "content": "a note", "source": "fork-edit"}),
    ]
    _doc, index = branch_of(tmp_path, Edit(messages=ops))
    delta = delta_of_edit(index, next(iter(index.edits)))
    assert delta is not None
    assert delta.marks == {1: REPLACED, 2: INJECTED, 13: NEW, 14: NEW}
    assert delta.was[1].text.startswith("CI for textkit is red")
    assert [(m.role, m.text.split()[1]) for _k, m in delta.removed] == [
        ("tool", ".github/workflows/ci.yml")
    ]


def test_a_proxy_branch_marks_only_what_the_edit_did(tmp_path: Path) -> None:
    """A proxy branch's list is the exact recorded request: its parts the log never stored
    (here a system-reminder block) are not called injected."""
    parent = proxy_run(tmp_path / "rec", "anthropic").path
    _doc, index = branch_of(tmp_path, Edit(inject="hi", redact=[1]), parent, at=2)
    delta = delta_of_edit(index, next(iter(index.edits)))
    assert delta is not None
    assert delta.marks == {2: NEW, 3: REDACTED, 4: INJECTED} and not delta.removed


def test_other_effects_and_frames_have_no_delta(tmp_path: Path) -> None:
    _doc, index = branch_of(tmp_path, Edit(inject="x"))
    assert delta_of_edit(index, 0) is None  # not an edit
    frame = frame_at(index, 1)  # the first model call: nothing was edited before it
    assert frame is not None and frame_delta(frame) is None
