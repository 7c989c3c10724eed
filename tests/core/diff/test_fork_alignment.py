"""A branch against its parent: the fork point pairs, the prefix is identical, the tails align.

A branch holds an ``edit`` effect before its first live model call, where the parent
has that model call (loom-format.md §10.3). The diff puts the edit on its own row
(the first divergence, where loom-harness's positional ``loom diff`` puts it) and
pairs the two model calls at the fork point as ``edited``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from loom_core.diff import EDITED, IDENTICAL, ONLY_A, ONLY_B, RESULTS, compare
from loom_core.fork.edits import Edit
from loom_core.fork.rerun import run_fork
from loom_core.formats.loader import load
from loom_core.providers.scripted import ScriptedProvider
from tests.core.clis import core
from tests.core.diff.test_interop import assert_agrees
from tests.core.diff.tracegen import basic_run, model, write

FORK_SEQ = 14  # the sample's reviewer call: the issue's own example
SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"


def sample_path(tmp_path: Path) -> Path:
    """A copy of the bundled sample (the repository's own is never written beside)."""
    return Path(shutil.copy(SAMPLE, tmp_path / "sample.loom.json"))


def sample_branch(tmp_path: Path) -> tuple[Path, Path]:
    """The bundled sample and a scripted fork of it at seq 14 (one live model call)."""
    parent = sample_path(tmp_path)
    out = tmp_path / "branch.loom.json"
    run_fork(load(parent), parent, FORK_SEQ, Edit(inject="try again"), ScriptedProvider(), out=out)
    return parent, out


def test_sample_fork_pairs_the_fork_point(tmp_path: Path) -> None:
    parent, branch = sample_branch(tmp_path)
    diff = compare(load(parent), load(branch))
    rows = [(r.a, r.b, r.status) for r in diff.rows]
    assert rows[:FORK_SEQ] == [(k, k, IDENTICAL) for k in range(FORK_SEQ)]
    assert rows[FORK_SEQ] == (None, FORK_SEQ, ONLY_B)  # the edit
    assert rows[FORK_SEQ + 1] == (FORK_SEQ, FORK_SEQ + 1, EDITED)  # the calls at the fork point
    assert rows[FORK_SEQ + 2 :] == [(k, None, ONLY_A) for k in range(FORK_SEQ + 1, 28)]
    first = diff.first_divergence
    assert first is not None and (first.row, first.a_seq, first.b_seq) == (FORK_SEQ, None, FORK_SEQ)
    assert diff.identical_prefix == FORK_SEQ


def test_sample_fork_agrees_with_loom_diff(tmp_path: Path) -> None:
    parent, branch = sample_branch(tmp_path)
    assert_agrees(parent, branch)
    assert_agrees(branch, parent)


def test_tails_align_after_the_fork_point(tmp_path: Path) -> None:
    """The branch re-ran the parent's tail with other words: step for step after the edit."""
    branch = basic_run()
    branch[2] = model(
        "Now search again.", [("c2", "search", {"query": "answer", "limit": 5})], 1200, 50, n=7
    )
    branch[4] = model("The answer is 41.", [], 1500, 20, n=2)
    snapshot = [
        {"role": "user", "content": "do it"},
        {"role": "user", "content": "be careful", "source": "fork-edit"},
    ]
    branch.insert(
        2,
        {
            "kind": "edit",
            "key": "0123456789ab",
            "result": snapshot,
            "depth": 0,
            "meta": {"agent": "worker"},
        },
    )
    diff = compare(
        load(write(tmp_path / "a.loom.json", basic_run())),
        load(write(tmp_path / "b.loom.json", branch)),
    )
    assert [(r.a, r.b, r.status) for r in diff.rows] == [
        (0, 0, IDENTICAL),
        (1, 1, IDENTICAL),
        (None, 2, ONLY_B),
        (2, 3, EDITED),
        (3, 4, IDENTICAL),
        (4, 5, RESULTS),
    ]
    assert diff.totals.statuses == {IDENTICAL: 3, EDITED: 1, RESULTS: 1, ONLY_B: 1}


def test_two_branches_pair_their_edits(tmp_path: Path) -> None:
    parent = sample_path(tmp_path)
    b1, b2 = tmp_path / "b1.loom.json", tmp_path / "b2.loom.json"
    run_fork(load(parent), parent, FORK_SEQ, Edit(inject="one"), ScriptedProvider(), out=b1)
    run_fork(load(parent), parent, FORK_SEQ, Edit(inject="two"), ScriptedProvider(), out=b2)
    diff = compare(load(b1), load(b2))
    assert [(r.a, r.b) for r in diff.rows] == [(k, k) for k in range(FORK_SEQ + 2)]
    assert diff.rows[FORK_SEQ].status == RESULTS  # same turn, other snapshots
    assert diff.rows[FORK_SEQ + 1].status != EDITED  # both sides were edited there


def test_cli_reports_the_edit_and_the_fork_point(tmp_path: Path) -> None:
    parent, branch = sample_branch(tmp_path)
    out = core("diff", parent, branch)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"identical prefix: {FORK_SEQ} step(s)"
    assert lines[2] == f"  b step {FORK_SEQ} [only-b]"  # steps by seq; a row is no step
    assert lines[3] == "    b edit: note injected — “try again”"
    assert lines[4] == (
        f"  then a step {FORK_SEQ} · b step {FORK_SEQ + 1} [edited]: the model "
        "call whose context was edited"
    )
    assert "totals: 14 identical, 1 edited, 13 only-a, 1 only-b" in out.stdout
    report = json.loads(core("diff", "--json", parent, branch).stdout)
    assert report["rows"][FORK_SEQ + 1]["status"] == EDITED
