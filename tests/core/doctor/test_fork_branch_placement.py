"""A fork branch's edit re-sends the parent's messages as a snapshot that names no effect.

The doctor must still say which model call first saw a tool result from before the fork
(the first call after the edit, when the edit kept the message unchanged), and a fork of
the branch must be able to redact that result by its step. A result the edit changed
(redacted) was not seen as recorded, so no call is named.
"""

from __future__ import annotations

from pathlib import Path

from loom_core.doctor import UNUSED, checkup_path
from loom_core.doctor.placement import Placement
from loom_core.fork.edits import REDACTED, Edit
from loom_core.fork.rerun import run_fork
from loom_core.formats.loader import load
from loom_core.providers.scripted import ScriptedProvider
from loom_core.views.context import build_context
from tests.core.fork.checks import read

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"
RESULT = 24  # the sample's last tool result (run_shell), seen by the model call at 25
FORK_AT = 25  # a branch forked there: its edit is step 25, its first call step 26


def fork(parent: Path, seq: int, edit: Edit, out: Path) -> Path:
    result = run_fork(load(str(parent)), parent, seq, edit, ScriptedProvider(), out=out)
    assert result.status == "done", result.error
    return out


def seen_at(path: Path) -> int | None:
    """The seq of the first model call that saw step RESULT's result, as placed."""
    doc = load(str(path))
    return Placement(doc, build_context(doc)).first_model_step(RESULT)


def finding_seen_at(path: Path) -> int | None:
    """What the doctor's finding about step RESULT says (its "Seen at")."""
    (finding,) = [f for f in checkup_path(path).of_kind(UNUSED) if f.step == RESULT]
    return finding.model_step


def test_the_first_call_after_the_edit_saw_what_the_edit_kept(tmp_path: Path) -> None:
    assert seen_at(SAMPLE) == FORK_AT
    branch = fork(SAMPLE, FORK_AT, Edit(inject="Be brief."), tmp_path / "b.loom.json")
    assert [e["kind"] for e in read(branch)["log"][FORK_AT : FORK_AT + 2]] == ["edit", "model"]
    assert seen_at(branch) == finding_seen_at(branch) == FORK_AT + 1
    # a fork of the branch at its first call: the branch's own edit is behind the new one,
    # and no model call used the list it made; the kept message is followed through both
    again = fork(branch, FORK_AT + 1, Edit(inject="Again."), tmp_path / "c.loom.json")
    assert seen_at(again) == FORK_AT + 2


def test_a_fork_of_a_branch_redacts_a_result_from_before_the_branch(tmp_path: Path) -> None:
    branch = fork(SAMPLE, FORK_AT, Edit(inject="Be brief."), tmp_path / "b.loom.json")
    redacted = fork(branch, FORK_AT + 1, Edit(redact=[RESULT]), tmp_path / "r.loom.json")
    snapshot = read(redacted)["log"][FORK_AT + 1]["result"]
    tools = [m["content"] for m in snapshot if m["role"] == "tool"]
    assert tools[-1] == REDACTED
    assert seen_at(redacted) is finding_seen_at(redacted) is None  # it saw the redaction
