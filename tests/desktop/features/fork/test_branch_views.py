"""A branch of the sample in the app: Compare pairs the fork point, the context view shows the
edit as an edit (not every message as NEW, not the edit step as a JSON dump)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from loom_core.diff import EDITED, IDENTICAL, ONLY_A, ONLY_B
from loom_core.fork.edits import Edit
from loom_core.fork.rerun import run_fork
from loom_core.formats.loader import load
from loom_core.providers.scripted import ScriptedProvider
from loom_core.views.steps import step_summary
from loom_desktop.document.context_html import ViewState, step_html
from loom_desktop.features.compare.model import COL_A_SEQ, COL_B, COL_B_SEQ, COL_STATUS
from loom_desktop.main_window import MainWindow
from tests.core.diff.test_fork_alignment import FORK_SEQ, sample_path
from tests.desktop.features.compare.test_compare import compare_paths

_DISPLAY = Qt.ItemDataRole.DisplayRole


def redacting_branch(tmp_path: Path) -> tuple[Path, Path]:
    """The sample forked at seq 14: the last test run (seq 13) redacted, a note injected."""
    parent = sample_path(tmp_path)
    out = tmp_path / "branch.loom.json"
    run_fork(
        load(parent),
        parent,
        FORK_SEQ,
        Edit(inject="be brief", redact=[13]),
        ScriptedProvider(),
        out=out,
    )
    return parent, out


def test_compare_pairs_the_fork_point(qtbot, window: MainWindow, tmp_path: Path) -> None:
    parent, branch = redacting_branch(tmp_path)
    view = compare_paths(qtbot, window, parent, branch)
    m = view.model
    statuses = [m.status(r) for r in range(m.rowCount())]
    assert statuses[:FORK_SEQ] == [IDENTICAL] * FORK_SEQ
    assert statuses[FORK_SEQ : FORK_SEQ + 2] == [ONLY_B, EDITED]
    assert set(statuses[FORK_SEQ + 2 :]) == {ONLY_A}
    edit_row, fork_row = FORK_SEQ, FORK_SEQ + 1
    assert (
        m.index(edit_row, COL_B)
        .data(_DISPLAY)
        .startswith("edit · note injected, redacted 1 result(s) — “be brief”")
    )
    assert m.index(fork_row, COL_STATUS).data(_DISPLAY) == "edited"
    assert "edited" in m.index(fork_row, COL_STATUS).data(Qt.ItemDataRole.ToolTipRole)
    assert (
        m.index(fork_row, COL_A_SEQ).data(_DISPLAY),
        m.index(fork_row, COL_B_SEQ).data(_DISPLAY),
    ) == (str(FORK_SEQ), str(FORK_SEQ + 1))
    assert view.current_row() == edit_row  # the first divergence: the edit
    view.grab().save(str(tmp_path / "compare.png"))


def test_context_after_the_edit_marks_only_what_is_new_or_edited(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    _parent, branch = redacting_branch(tmp_path)
    view = open_and_wait(window, branch)
    tl = view.session.timeline
    model_step = next(s for s in range(len(tl)) if tl.effect_of[s] == FORK_SEQ + 1)
    page = step_html(tl, model_step, ViewState())
    # new since the previous call: its reply and the test run's result (now redacted)
    assert page.count(">NEW<") == 1
    assert page.count("EDIT · redacted") == 1 and page.count("EDIT · injected") == 1
    assert "be brief" in page and "[redacted: flagged by checkup]" in page
    assert "a fork edit changed it: injected 1 message, redacted 1 message" in page
    assert "(16; 1 new)" in page


def test_edit_step_says_what_changed_not_a_json_dump(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    _parent, branch = redacting_branch(tmp_path)
    view = open_and_wait(window, branch)
    tl = view.session.timeline
    edit_step = next(s for s in range(len(tl)) if tl.effect_of[s] == FORK_SEQ)
    page = step_html(tl, edit_step, ViewState())
    assert "Fork edit: note injected, redacted 1 result(s)" in page
    assert "EDIT · injected" in page and "EDIT · redacted" in page and "before the edit" in page
    assert '"role"' not in page and "&quot;role&quot;" not in page  # no snapshot JSON
    assert step_summary(tl, edit_step).startswith("note injected, redacted 1 result(s)")


def test_the_edit_is_a_stub_on_the_timeline_not_a_bar_as_tall_as_its_context(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    """The edit holds the whole edited context (thousands of characters) but has no
    tokens: it was drawn nearly as tall as the run's largest model call."""
    _parent, branch = redacting_branch(tmp_path)
    view = open_and_wait(window, branch)
    tl, bars = view.session.timeline, view.timeline_widget.bars
    edit = next(s for s in range(len(tl)) if tl.kind_name(s) == "edit")
    models = [bars.heights[s] for s in range(len(tl)) if tl.kind_name(s) == "model"]
    assert tl.tokens_in[edit] + tl.tokens_out[edit] == 0
    assert 0 < bars.heights[edit] == bars.lane < 0.1 * max(models)
