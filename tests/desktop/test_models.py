"""Every Qt model passes qtmodeltester, including across a head→full swap and a filter."""

from __future__ import annotations

from array import array

from loom_core.formats.loader import load
from loom_core.views.timeline import F_DENIED, build_timeline
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


def test_a_row_is_computed_once_for_all_its_cells_until_it_may_read_differently(
    sample, monkeypatch
) -> None:
    """A paint asks for every cell of every visible row (a live tab at each insert, a scrub
    at each move): the row is built once, and again only after a change is announced."""
    model = StepListModel()
    tl = build_timeline(load(sample))
    model.set_timeline(tl)
    built: list[int] = []
    real = StepListModel.step_row

    def counting(self: StepListModel, step: int):
        built.append(step)
        return real(self, step)

    monkeypatch.setattr(StepListModel, "step_row", counting)
    step = next(s for s in range(len(tl)) if not tl.flags[s] & F_DENIED)
    cells = [model.index(step, col).data() for col in range(model.columnCount())]
    assert [model.index(step, col).data() for col in range(model.columnCount())] == cells
    assert built == [step]
    tl.flags[step] |= F_DENIED  # as a live run's shield decision arrives…
    model.dataChanged.emit(model.index(step, 0), model.index(step, COL_SUMMARY))  # …and says so
    assert model.index(step, COL_SUMMARY).data() != cells[COL_SUMMARY]
    assert built == [step, step]
