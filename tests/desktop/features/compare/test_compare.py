"""The Compare view: Run ▸ Compare…, aligned rows, first divergence, pair details, n/p, colours."""

from __future__ import annotations

import json
import re
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage

from loom_core.diff import IDENTICAL, INPUTS, KINDS, ONLY_A, ONLY_B, RESULTS
from loom_core.formats.save import save_dict
from loom_desktop.features.compare.dialog import CompareDialog
from loom_desktop.features.compare.model import (
    COL_A,
    COL_B,
    COL_D_COST,
    COL_D_TOKENS,
    COL_STATUS,
    STATUS_COLORS,
    StatusRole,
    signed_cost,
)
from loom_desktop.features.compare.view import CompareView
from loom_desktop.main_window import MainWindow
from tests.core.diff.tracegen import basic_run, model, tool, write

_BG, _FG = Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole


def main_pair(tmp: Path) -> tuple[Path, Path]:
    """B rewords step 2, finds a third hit, answers 43 for fewer tokens, then adds a step."""
    b = basic_run()
    b[2] = model(
        "Now search the index.", [("c2", "search", {"query": "answer", "limit": 5})], 1200, 50, n=1
    )
    b[3] = tool("search", '{"hits": [1, 2, 3], "total": 3}', "c2", {"query": "answer", "limit": 5})
    b[4] = model("The answer is 43 for sure.", [], 1400, 20, n=2)
    b.append(model("Done.", [], 10, 1, n=3))
    return write(tmp / "a.loom.json", basic_run()), write(tmp / "b.loom.json", b)


def all_statuses_pair(tmp: Path) -> tuple[Path, Path]:
    """One row of every status (the diff core's own "dropped and replaced" case, extended)."""
    b = basic_run()
    del b[1]  # read_file's result: only in A
    b[1] = model(
        "Now search harder.", [("c2", "search", {"query": "answer", "limit": 5})], 1200, 50, n=1
    )  # results differ
    b[2] = tool("grep", "no hits", "c2", {"query": "answer"})  # search became grep: kinds differ
    b[3] = model("The answer is 42 for sure.", [], 1500, 20, n=9)  # another key: inputs differ
    b.append(tool("note", "saved", "c5", {"text": "42"}))  # only in B
    return write(tmp / "a.loom.json", basic_run()), write(tmp / "b.loom.json", b)


def wait_ready(qtbot, view: CompareView) -> None:
    qtbot.waitUntil(lambda: view.state in ("ready", "failed"), timeout=30_000)
    assert view.state == "ready"


def compare_paths(qtbot, window: MainWindow, pa: Path, pb: Path) -> CompareView:
    view = window.open_compare(str(pa), str(pb))
    assert isinstance(view, CompareView)
    wait_ready(qtbot, view)
    return view


def test_compare_dialog_opens_tab_at_first_divergence(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    pa, pb = main_pair(tmp_path)
    va, vb = open_and_wait(window, pa), open_and_wait(window, pb)
    window.tabs.setCurrentWidget(va)
    dialog = window.compare_dialog()
    assert isinstance(dialog, CompareDialog) and dialog.choice() == (va, vb)  # current, then next
    dialog.accept()
    view = dialog.result_view
    assert isinstance(view, CompareView) and window.tabs.currentWidget() is view
    assert (
        view.state == "comparing"
        and window.tabs.tabText(window.tabs.currentIndex()) == "a.loom.json ⟷ b.loom.json"
    )
    assert window.current() is None and window.documents() == [va, vb]  # status bar code is safe
    window.update_status()
    wait_ready(qtbot, view)
    diff = view.diff
    assert diff is not None and [r.status for r in diff.rows] == [
        IDENTICAL,
        IDENTICAL,
        RESULTS,
        RESULTS,
        RESULTS,
        ONLY_B,
    ]
    assert view.current_row() == diff.first_divergence.row == 2  # selected on open
    assert view.shown_row == 2 and view.detail is not None
    assert view.pair_label.text().startswith("A step 2 ⟷ B step 2 · results differ")
    assert view.text_a.toPlainText().strip() == "Now search."
    assert view.text_b.toPlainText().strip() == "Now search the index."
    html_b = view.text_b.toHtml()
    assert "the index" in html_b.replace("&nbsp;", " ") and "#d4f5dc" in html_b  # insertion
    assert "Identical prefix: <b>2</b>" in view.header_label.text()
    assert "A step 2 ⟷ B step 2" in view.header_label.text() and view.first_button.isEnabled()
    assert "row" not in view.header_label.text()
    assert (
        "2 identical" in view.counts_label.text() and "3 results differ" in view.counts_label.text()
    )


def test_word_and_structural_diffs_of_a_pair(qtbot, window: MainWindow, tmp_path: Path) -> None:
    view = compare_paths(qtbot, window, *main_pair(tmp_path))
    view.select_row(3)  # the search result: a JSON string whose structure changed
    qtbot.waitUntil(lambda: view.shown_row == 3, timeout=10_000)
    changes = [(p, c.path, c.op) for p, c in view.changes_model.changes]
    assert ("result", "$.hits[2]", "added") in changes and (
        "result",
        "$.total",
        "changed",
    ) in changes
    m = view.changes_model
    row = next(k for k, (_p, c) in enumerate(m.changes) if c.path == "$.total")
    assert [m.index(row, c).data() for c in range(5)] == ["result", "$.total", "changed", "2", "3"]
    view.select_row(4)
    qtbot.waitUntil(lambda: view.shown_row == 4, timeout=10_000)
    html_a = view.text_a.toHtml()
    assert "line-through" in html_a and "42" in html_a and "43" not in view.text_a.toPlainText()
    assert "43" in view.text_b.toPlainText()
    view.select_row(5)  # a gap on A's side
    qtbot.waitUntil(lambda: view.shown_row == 5, timeout=10_000)
    assert "no step in A" in view.text_a.toPlainText() and "Done." in view.text_b.toPlainText()


def test_text_is_escaped_and_keeps_its_lines(qtbot, window: MainWindow, tmp_path: Path) -> None:
    a, b = basic_run(), basic_run()
    b[4] = model("The answer is <b>43</b> & more.\n\n  indented line", [], 1500, 20, n=2)
    view = compare_paths(
        qtbot, window, write(tmp_path / "a.loom.json", a), write(tmp_path / "b.loom.json", b)
    )
    assert view.text_b.toPlainText().strip() == "The answer is <b>43</b> & more.\n\n  indented line"
    view.text_b.setFocus()  # n / p work wherever the focus is inside the tab
    qtbot.keyClick(view.text_b, Qt.Key.Key_P)
    assert view.current_row() == 4  # the only difference: nothing before it
    view.select_row(0)
    view.text_b.setFocus()
    qtbot.keyClick(view.text_b, Qt.Key.Key_N)
    assert view.current_row() == 4


def test_n_and_p_move_between_differences(qtbot, window: MainWindow, tmp_path: Path) -> None:
    view = compare_paths(qtbot, window, *main_pair(tmp_path))
    view.table.setFocus()
    visited = []
    for _ in range(5):  # bounded: 4 differences, one extra press stays on the last
        qtbot.keyClick(view.table, Qt.Key.Key_N)
        visited.append(view.current_row())
    assert visited == [3, 4, 5, 5, 5]
    qtbot.keyClick(view.table, Qt.Key.Key_P)
    qtbot.keyClick(view.table, Qt.Key.Key_P)
    assert view.current_row() == 3
    view.select_row(0)
    qtbot.keyClick(view.table, Qt.Key.Key_P)  # nothing before the first divergence
    assert view.current_row() == 0
    qtbot.keyClick(view.table, Qt.Key.Key_N)
    assert view.current_row() == 2
    view.select_row(5)
    view.first_button.click()
    assert view.current_row() == 2
    qtbot.waitUntil(lambda: view.shown_row == 2, timeout=10_000)


def test_statuses_are_coloured(qtbot, qtmodeltester, window: MainWindow, tmp_path: Path) -> None:
    view = compare_paths(qtbot, window, *all_statuses_pair(tmp_path))
    m = view.model
    qtmodeltester.check(m)
    qtmodeltester.check(view.changes_model)
    rows = {m.index(r, 0).data(StatusRole): r for r in range(m.rowCount())}
    assert set(rows) == {IDENTICAL, ONLY_A, RESULTS, KINDS, INPUTS, ONLY_B}
    for status in (RESULTS, INPUTS, KINDS, ONLY_A, ONLY_B):
        assert m.index(rows[status], COL_STATUS).data(_BG) == QColor(STATUS_COLORS[status][0])
    ident = rows[IDENTICAL]
    assert m.index(ident, COL_STATUS).data(_BG) is None
    assert m.index(ident, COL_A).data(_FG) == QColor(STATUS_COLORS[IDENTICAL][0])  # muted
    assert m.index(rows[KINDS], COL_A).data(_BG) == QColor(STATUS_COLORS[KINDS][1])
    gap_a, gap_b = rows[ONLY_B], rows[ONLY_A]
    assert m.index(gap_a, COL_A).data() == "" and m.index(gap_a, COL_A).data(_BG) is None
    assert m.index(gap_a, COL_B).data(_BG) == QColor(STATUS_COLORS[ONLY_B][1])
    assert m.index(gap_b, COL_B).data() == "" and m.index(gap_b, COL_B).data(_BG) is None
    assert m.index(gap_b, COL_A).data(_BG) == QColor(STATUS_COLORS[ONLY_A][1])
    assert m.index(rows[KINDS], COL_A).data().startswith("tool:search · ")
    assert m.index(rows[KINDS], COL_B).data() == "tool:grep · no hits"
    assert m.index(rows[KINDS], COL_STATUS).data() == "kinds differ"


def test_totals_show_each_side_and_the_delta(qtbot, window: MainWindow, tmp_path: Path) -> None:
    view = compare_paths(qtbot, window, *main_pair(tmp_path))
    html = view.totals_label.text()
    text = re.sub(r"<[^>]+>", "", html)
    assert "3,700 in / 170 out" in text and "3,610 in / 171 out" in text
    assert "Δ B−A: −89 tokens" in text and "B is cheaper" in text and "#2e7d32" in html  # green
    # a wrapped line never parts a sign from its amount ("−" then "$0.1110" on the next line)
    cost = re.search(r"tokens · (<span[^>]*>)([^<]*)</span>", html)
    assert cost is not None and "nowrap" in cost.group(1) and cost.group(2).startswith("−$")
    m, rows = view.model, view.diff.rows
    last = m.index(len(rows) - 1, COL_D_TOKENS)
    assert last.data() == "+11" and last.data(_FG) == QColor("#c62828")
    answer = m.index(4, COL_D_TOKENS)
    assert answer.data() == "−100" and answer.data(_FG) == QColor("#2e7d32")
    assert m.index(4, COL_D_COST).data().startswith("−$0.000")
    # every delta in the cost column is written as the step list writes money
    from loom_core.views.pricing import format_usd

    for r, row in enumerate(rows):
        shown = m.index(r, COL_D_COST).data()
        if shown and shown != "?":
            delta = float(shown.replace("−", "-").replace("$", "").replace("+", ""))
            assert shown == format_usd(delta, signed=True), (r, row, shown)
    assert signed_cost(-0.002571) == "−$0.0026" and signed_cost(0.0118) == "+$0.0118"
    # swapped, B is dearer and the delta turns red
    swapped = compare_paths(qtbot, window, tmp_path / "b.loom.json", tmp_path / "a.loom.json")
    assert "B is dearer" in swapped.totals_label.text() and "#c62828" in swapped.totals_label.text()


def test_identical_runs_say_so(qtbot, window: MainWindow, tmp_path: Path) -> None:
    pa = write(tmp_path / "a.loom.json", basic_run())
    pb = write(tmp_path / "b.loom.json", basic_run())
    view = compare_paths(qtbot, window, pa, pb)
    assert "identical" in view.header_label.text().lower()
    assert not view.first_button.isEnabled() and view.current_row() == 0
    qtbot.keyClick(view.table, Qt.Key.Key_N)
    assert view.current_row() == 0


def test_dialog_defaults_to_a_branch_and_its_parent(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    parent = write(tmp_path / "parent.loom.json", basic_run())
    branch = write(tmp_path / "branch.loom.json", basic_run())
    data = json.loads(branch.read_text())
    data["fork"] = {"parent": {"path": str(parent.resolve()), "checksum": None}, "step": 2}
    save_dict(data, branch)
    other = write(tmp_path / "other.loom.json", basic_run())
    vp, vb, vo = (open_and_wait(window, p) for p in (parent, branch, other))
    window.tabs.setCurrentWidget(vb)
    dialog = CompareDialog(window)
    assert dialog.choice() == (vp, vb)  # A = the parent, B = the branch
    dialog.swap()
    assert dialog.choice() == (vb, vp)
    dialog.reject()
    window.tabs.setCurrentWidget(vo)  # not a branch: current tab, then the next one (wrapping)
    dialog = CompareDialog(window)
    assert dialog.choice() == (vo, vp)
    dialog.set_path("b", str(other))
    assert dialog.choice() == (vo, str(other))
    dialog.reject()


def test_dialog_with_one_run_waits_for_a_second(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    pa, pb = main_pair(tmp_path)
    va = open_and_wait(window, pa)
    dialog = CompareDialog(window)
    ok = dialog.buttons.buttons()[0]
    assert dialog.choice() == (va, None) and not ok.isEnabled()
    dialog.set_path("b", str(pb))
    assert ok.isEnabled()
    dialog.accept()
    wait_ready(qtbot, dialog.result_view)
    assert len(dialog.result_view.diff.rows) == 6


def test_run_menu_has_compare_before_help(window: MainWindow) -> None:
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles == ["&File", "&Proxy", "&View", "&Run", "&Settings", "&Help"]
    action = next(a for a in window.run_menu.actions() if a.text() == "&Compare…")
    assert action.shortcut().toString() == "Ctrl+Shift+D"


def test_errors_name_the_file_and_cause(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    pa, _ = main_pair(tmp_path)
    va = open_and_wait(window, pa)
    bad = tmp_path / "broken.loom.json"
    bad.write_text("{not json")
    assert window.open_compare(va, str(bad)) is not None
    # the failed tab is closed (and deleted) at once: wait for the error, not on the view
    qtbot.waitUntil(lambda: len(window.errors) == 1, timeout=10_000)
    assert window.tabs.count() == 1  # the failed tab is gone, the run's tab stays
    assert window.documents() == [va]
    assert len(window.errors) == 1 and str(bad) in window.errors[0]
    assert window.errors[0].count("\n\n") == 1 and window.errors[0].split("\n\n")[1]
    loading = window.open_path(str(pa))  # not loaded yet: refused with a dialog
    assert window.open_compare(loading, va) is None
    assert "not loaded yet" in window.errors[-1] and str(pa) in window.errors[-1]
    qtbot.waitUntil(lambda: loading.complete, timeout=20_000)


def test_big_compare_runs_in_a_worker(qtbot, window: MainWindow, tmp_path: Path) -> None:
    n = 10_000  # model + tool pairs: 20,000 steps per run
    steps = [
        e
        for k in range(n)
        for e in (
            model(f"step {k}", [(f"c{k}", "read_file", {"path": f"{k}.txt"})], 100, 5, n=k),
            tool("read_file", f"contents {k}", f"c{k}", {"path": f"{k}.txt"}),
        )
    ]
    pa = write(tmp_path / "a.loom.json", steps)
    steps[15_000] = model(
        "step 7500, reworded", [("c7500", "read_file", {"path": "7500.txt"})], 100, 5, n=7500
    )
    pb = write(tmp_path / "b.loom.json", steps)
    view = window.open_compare(str(pa), str(pb))
    # The call returned before any comparing happened: the work is queued on a worker.
    assert view.state == "comparing" and view.model.rowCount() == 0
    assert view.busy_label.isVisibleTo(view) and "Comparing" in view.busy_label.text()
    qtbot.waitUntil(lambda: view.state != "comparing", timeout=60_000)
    assert view.state == "ready" and view.model.rowCount() == 20_000
    assert view.current_row() == 15_000 and not view.busy_label.isVisibleTo(view)
    assert "reworded" in view.text_b.toPlainText()


def _pixels_near(image: QImage, color: QColor, step: int = 2) -> int:
    count = 0
    for y in range(0, image.height(), step):
        for x in range(0, image.width(), step):
            c = image.pixelColor(x, y)
            if (
                abs(c.red() - color.red())
                + abs(c.green() - color.green())
                + abs(c.blue() - color.blue())
                < 24
            ):
                count += 1
    return count


def test_screenshot_shows_the_statuses(qtbot, window: MainWindow, tmp_path: Path) -> None:
    view = compare_paths(qtbot, window, *all_statuses_pair(tmp_path))
    qtbot.waitUntil(lambda: view.shown_row == view.diff.first_divergence.row, timeout=10_000)
    view.select_row(3)  # the kinds-differ row: the selected status cell keeps its red
    qtbot.waitUntil(lambda: view.shown_row == 3, timeout=10_000)
    path = tmp_path / "compare.png"
    assert view.grab().save(str(path))
    image = QImage(str(path))
    assert image.width() > 600 and image.height() > 400
    for status in (KINDS, RESULTS, INPUTS, ONLY_A, ONLY_B):
        assert _pixels_near(image, QColor(STATUS_COLORS[status][0])) > 50, status


def test_closing_a_tab_while_comparing(qtbot, window: MainWindow, tmp_path: Path) -> None:
    pa, pb = main_pair(tmp_path)
    view = window.open_compare(str(pa), str(pb))
    assert view.state == "comparing"
    window.close_tab(window.tabs.indexOf(view))
    assert window.tabs.count() == 0 and not view._compare_task.running
    kept = compare_paths(qtbot, window, pa, pb)  # the next comparison is unaffected
    assert kept.current_row() == 2


def test_dialog_labels_show_their_mnemonic_not_an_ampersand(window: MainWindow) -> None:
    """ "Run &A" must read "Run A" with A underlined: each label is the buddy of its combo."""
    from PySide6.QtWidgets import QLabel

    dialog = CompareDialog(window)
    labels = {lab.text(): lab for lab in dialog.findChildren(QLabel) if "&" in lab.text()}
    assert set(labels) == {"Run &A (original):", "Run &B (compared):"}
    assert labels["Run &A (original):"].buddy() is dialog.combo_a
    assert labels["Run &B (compared):"].buddy() is dialog.combo_b
    dialog.reject()
