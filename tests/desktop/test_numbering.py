"""One step, one number: the effect's ``seq`` in the step list, the status bar, the context
header, the timeline's axis and tooltips, and ``loom-desktop --step``.

The bundled sample starts with a user prompt row, so its list row N shows seq N-1: any
place still numbering by row is off by one here (and by two after the second prompt).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPointF

from loom_core.formats.loader import load
from loom_core.views.steps import step_of_seq
from loom_core.views.timeline import F_BLOCKED, F_DENIED, F_ERROR, F_SHIELD, build_timeline
from loom_desktop.__main__ import screenshot
from loom_desktop.document.context_html import ViewState, step_html
from loom_desktop.document.step_list_model import COL_STEP, StepListModel
from loom_desktop.main_window import MainWindow
from loom_desktop.widgets.timeline import TimelineWidget

REVIEWER_CALL = 14  # the sample's delegation to the reviewer: list row 15 (after the prompt)
FOLLOW_UP = 23  # the first step after the second user prompt: list row 25


def test_step_list_numbers_steps_by_seq_and_prompts_not_at_all(sample: Path) -> None:
    tl = build_timeline(load(sample))
    model = StepListModel()
    model.set_timeline(tl)
    numbers = [model.index(r, COL_STEP).data() for r in range(model.rowCount())]
    assert numbers[0] == "" and numbers[24] == ""  # the two user prompts: not steps
    assert numbers[1] == "0" and numbers[15] == str(REVIEWER_CALL) and numbers[25] == "23"
    assert [n for n in numbers if n] == [str(e.seq) for e in tl.doc.effects]


def test_status_bar_and_context_header_name_the_seq(
    open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    tl = view.session.timeline
    view.session.set_step(step_of_seq(tl, REVIEWER_CALL))
    window.update_status()
    assert window.status_labels["step"].text() == f"step {REVIEWER_CALL} · 16 of 30"
    header = step_html(tl, view.session.step, ViewState()).split("</div>")[0]
    assert f"step {REVIEWER_CALL} ·" in header and "seq" not in header
    view.session.set_step(0)
    window.update_status()
    assert window.status_labels["step"].text() == "prompt · 1 of 30"
    # one name for the row: "prompt" (not "episode", "user prompt" and "prompt")
    header = step_html(tl, 0, ViewState()).split("</div>")[0]
    assert ">prompt</b> · agent user" in header and "episode" not in header
    result = step_of_seq(tl, 4)  # run_tests' error: called at step 3
    assert "Call (made at <a href='loom:step:4'>step 3</a>)" in step_html(tl, result, ViewState())


def test_timeline_axis_labels_seqs_at_their_steps_rows(qtbot, sample: Path) -> None:
    tl = build_timeline(load(sample))
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(1200, 300)
    widget.show()
    widget.set_timeline(tl)
    axis = widget.axis
    levels = axis.tickValues(-0.5, len(tl) - 0.5, 1100)
    rows = [r for _spacing, values in levels for r in values]
    labels = dict(zip(rows, axis.tickStrings(rows, 1.0, 1.0), strict=True))
    assert labels, "no ticks"
    for row, text in labels.items():  # each tick names the seq of the step on its row
        assert text == str(tl.doc.effects[tl.effect_of[int(row)]].seq)
    assert labels[float(step_of_seq(tl, 25))] == "25" and "0" in labels.values()
    close = [r for _s, values in axis.tickValues(14.5, 17.5, 1100) for r in values]  # zoomed in
    assert sorted(axis.tickStrings(close, 1.0, 1.0)) == ["14", "15", "16"]
    assert axis.tickStrings([0.0, 24.0], 1.0, 1.0) == ["", ""]  # prompt rows: no number
    for bit in (F_ERROR, F_BLOCKED, F_SHIELD):  # markers still sit on their step's row
        marked = set(widget.markers[bit].getData()[0].astype(int))
        hidden = F_DENIED if bit == F_SHIELD else 0  # a denial's ◆ stands alone
        assert marked == {
            s for s in range(len(tl)) if tl.flags[s] & bit and not tl.flags[s] & hidden
        }
    view = widget.getPlotItem().getViewBox()
    at = view.mapViewToScene(QPointF(float(step_of_seq(tl, REVIEWER_CALL)), 100.0))
    widget._hovered(at)
    cost = tl.cost_text(step_of_seq(tl, REVIEWER_CALL))  # the step list's words for it
    assert widget.toolTip().startswith(
        f"step {REVIEWER_CALL} · model · 3,337 tokens · {cost}\ncalls reviewer"
    )
    widget._hovered(view.mapViewToScene(QPointF(24.0, 10.0)))
    assert widget.toolTip().startswith("prompt\nThanks.")
    # a denied call's step says so (its ◆ is the only sign on it)
    denied = step_of_seq(tl, 12)
    widget._hovered(view.mapViewToScene(QPointF(float(denied), 100.0)))
    assert (
        "· denied by the shield\n" in widget.toolTip() and "shield decision" not in widget.toolTip()
    )


def test_screenshot_step_is_a_seq(window: MainWindow, sample: Path, tmp_path: Path, capsys) -> None:
    assert screenshot(window, [str(sample)], str(tmp_path / "a.png"), FOLLOW_UP, "900x600") == 0
    view = window.current()
    assert view.session.step == 25 and view.session.timeline.effect_of[25] == FOLLOW_UP
    assert window.status_labels["step"].text().startswith(f"step {FOLLOW_UP} ·")
    assert screenshot(window, [str(sample)], str(tmp_path / "b.png"), 28, "900x600") == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and str(sample) in err[0] and "no step 28" in err[0]


def test_timeline_axis_of_a_log_with_odd_seqs(qtbot, tmp_path: Path) -> None:
    """Hand-edited seqs (out of order, null) still label each step by its own number."""
    import json

    path = tmp_path / "odd.loom.json"
    path.write_text(
        json.dumps(
            {
                "prompt": "p",
                "output": "",
                "log": [
                    {"seq": 2, "kind": "model"},
                    {"seq": None, "kind": "model"},
                    {"seq": 0, "kind": "model"},
                ],
            }
        )
    )
    tl = build_timeline(load(path))
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.set_timeline(tl)
    assert widget.axis.tickStrings([0.0, 1.0, 2.0, 3.0], 1.0, 1.0) == ["", "2", "1", "0"]
    rows = [r for _s, values in widget.axis.tickValues(-0.5, 3.5, 600) for r in values]
    assert sorted(widget.axis.tickStrings(rows, 1.0, 1.0)) == ["0", "1", "2"]
    assert dict(zip(widget.axis.tickStrings(rows, 1.0, 1.0), rows, strict=True))["0"] == 3.0


def test_doctor_column_names_steps_by_seq_and_a_prompt_as_a_prompt(tmp_path: Path) -> None:
    """The panel's Step column says what ``doctor`` says: the seq, or the user prompt."""
    from loom_core.cli.doctor import where
    from loom_core.doctor import checkup
    from loom_desktop.features.doctor.findings_model import F_STEP, FindingsModel, locate
    from tests.core.doctor.traces import WORDS, Trace

    text = " ".join(WORDS[:8])
    t = Trace(text, text)
    t.model("first answer")
    second = t.model("second answer")
    doc = load(t.save(tmp_path / "t.loom.json"))
    tl = build_timeline(doc)
    found = checkup(doc).findings
    model = FindingsModel()
    model.set_findings(found, [locate(f, doc, tl) for f in found])
    [row] = [r for r, f in enumerate(found) if f.episode is not None]
    assert model.index(row, F_STEP).data() == "prompt"
    assert where(found[row]).endswith(f"before step {second}")
    assert tl.kind_name(model.steps[row][0]) == "prompt"  # the mark sits on the prompt row


def test_step_list_signs_match_the_timeline_legend() -> None:
    """The step list's sign for a denied call and for any other shield decision is the
    glyph the timeline draws for it (a diamond, a star): one meaning per sign."""
    from loom_core.views.steps import flag_marks
    from loom_core.views.timeline import F_DENIED, F_SHIELD
    from loom_desktop.widgets.timeline import _MARKS

    glyph = {"d": "◆", "star": "★"}
    drawn = {bit: glyph[symbol] for bit, symbol, _ in _MARKS if symbol in glyph}
    assert flag_marks(F_DENIED | F_SHIELD).strip() == drawn[F_DENIED]
    assert flag_marks(F_SHIELD).strip() == drawn[F_SHIELD]


def test_a_denied_step_is_drawn_as_a_diamond_alone(qtbot, sample: Path) -> None:
    """◆ is a denial, ★ any other shield decision: the timeline draws a denied step's ◆
    without a ★ over it, as the step list signs it (issue 11's leftover)."""
    from loom_core.views.steps import flag_marks

    tl = build_timeline(load(sample))
    decided = [s for s in range(len(tl)) if tl.flags[s] & F_SHIELD]
    tl.flags[decided[0]] |= F_DENIED  # one of them denied
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.set_timeline(tl)

    def drawn(bit: int) -> list[int]:
        xs = widget.markers[bit].getData()[0]
        return [] if xs is None else [int(x) for x in xs]

    assert drawn(F_DENIED) == [decided[0]] and drawn(F_SHIELD) == decided[1:]
    assert flag_marks(int(tl.flags[decided[0]])).strip() == "◆"


def test_a_seq_beyond_a_float_is_placed_and_still_named(qtbot) -> None:
    """A hand-edited seq of 10**400 (JSON has no integer limit) crashed the plot's axis."""
    from tests.core.fuzz.drive import REGRESSIONS

    tl = build_timeline(load(REGRESSIONS / "numbers-huge-seq-timeline-axis.json"))
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.set_timeline(tl)
    assert widget.axis.tickStrings([0.0, 1.0], 1.0, 1.0) == ["0", "1" + "0" * 400]
