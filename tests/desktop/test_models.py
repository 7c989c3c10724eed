"""Every Qt model passes qtmodeltester, including across a head→full swap and a filter."""

from __future__ import annotations

from array import array

from loom_core.formats.loader import load
from loom_core.views.timeline import build_timeline
from loom_desktop.document.step_list_model import COL_SUMMARY, StepListModel, StepRole


def test_step_list_model_passes_modeltester(qtmodeltester, sample) -> None:
    model = StepListModel()
    tl = build_timeline(load(sample))
    model.set_timeline(tl)
    qtmodeltester.check(model)
    assert model.rowCount() == len(tl)
    model.set_rows(array("i", [1, 5, 9]))
    qtmodeltester.check(model)
    assert model.rowCount() == 3
    assert model.index(1, 0).data(StepRole) == 5
    assert model.row_of(9) == 2 and model.row_of(4) == -1


def test_summary_column_reads_lazily(sample) -> None:
    model = StepListModel()
    tl = build_timeline(load(sample))
    model.set_timeline(tl)
    assert not model._summaries
    text = model.index(0, COL_SUMMARY).data()
    assert "CI for textkit" in text
    assert len(model._summaries) == 1
