"""The doctor panel and Heal… in the app: findings listed and marked on the timeline, a click
shows the item in context; a heal with a scripted model fills its table live, opens the winner
beside a compare tab and saves a regression trace; cancel, close and bad input end cleanly."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from loom_core.doctor import checkup
from loom_core.formats.journal_writer import JournalWriter
from loom_core.formats.loader import load
from loom_core.heal.checks import Check
from loom_core.heal.engine import Healer
from loom_core.providers.base import CancelToken, ModelReply, ModelRequest
from loom_core.providers.scripted import ScriptedProvider
from loom_desktop.document.context_html import HIGHLIGHT_BG, HIGHLIGHT_MARK
from loom_desktop.document.view import DocumentView
from loom_desktop.features.compare.view import CompareView
from loom_desktop.features.doctor.findings_model import (
    F_MESSAGE,
    F_SEEN,
    F_SHARE,
    F_SNIPPET,
    F_STEP,
    CandidatesModel,
    FindingsModel,
    locate,
)
from loom_desktop.features.fork.branch_bar import BranchBar, BranchesBar
from loom_desktop.features.heal import runner as heal_runner
from loom_desktop.features.heal.dialog import HealDialog
from loom_desktop.main_window import MainWindow
from tests.core.clis import loom
from tests.core.heal.scenario import BAD, GOOD, falls_for_poison, poisoned_run

# fetch_page: step (seq) 2 at list row 3; first seen by the model call at step 3, row 4.
# Texts and columns name steps by seq; the rows are only where the panel marks and jumps.
POISON_SEQ, POISON_STEP, MODEL_STEP, MODEL_SEQ = 2, 3, 4, 3


@pytest.fixture
def poisoned(tmp_path: Path) -> Path:
    """Steps: 0 prompt, 1 model, 2 read_notes, 3 fetch_page (huge, poisoned), 4 model: PWNED."""
    (tmp_path / "run").mkdir()
    return poisoned_run(tmp_path / "run")


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """Released at teardown whatever happens, so no provider thread is left waiting."""
    event = threading.Event()
    yield event
    event.set()


def fooled_model(request: ModelRequest) -> ModelReply:
    return ModelReply(
        falls_for_poison(request.messages), [], "end_turn", {"input_tokens": 40, "output_tokens": 5}
    )


def use_provider(monkeypatch: pytest.MonkeyPatch, make: Any) -> None:
    """The seam: every provider the heal builds for "scripted" comes from ``make()``."""
    real = heal_runner.make_provider
    monkeypatch.setattr(
        heal_runner,
        "make_provider",
        lambda name, model="", base_url=None: (
            make() if name == "scripted" else real(name, model, base_url)
        ),
    )


class BlockingProvider(ScriptedProvider):
    """Holds every call until the heal is cancelled (bounded: 20 s), then raises Cancelled."""

    def __init__(self, entered: threading.Event) -> None:
        super().__init__()
        self.entered = entered

    def complete(self, request: ModelRequest, cancel: CancelToken | None = None) -> ModelReply:
        self.entered.set()
        assert cancel is not None and cancel.wait(20), "the test never cancelled"
        cancel.check()
        raise AssertionError("unreachable")


def show_doctor(qtbot, window: MainWindow, view: DocumentView) -> None:
    window.doctor.toggleViewAction().trigger()
    qtbot.waitUntil(lambda: id(view) in window.doctor.results, timeout=20_000)


def open_heal(qtbot, window: MainWindow, view: DocumentView, how: Any = None) -> HealDialog:
    (how or (lambda: window.doctor.heal(view)))()
    dialog = window.doctor.dialogs[-1]
    assert isinstance(dialog, HealDialog) and dialog.view is view
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=20_000)
    combo = dialog.settings.provider
    combo.setCurrentIndex(combo.findData("scripted"))
    return dialog


def set_check(qtbot, dialog: HealDialog, field: str, text: str) -> None:
    dialog.fields[field].setText(text)
    qtbot.waitUntil(
        lambda: (
            not any(t.isActive() for t in dialog._timers.values())
            and not dialog._probe_task.running
            and not dialog._plan_task.running
        ),
        # a bound, not an expectation: the provider probe's first import of an SDK took
        # more than 10 s with a load of 8 on two cores
        timeout=60_000,
    )


def cli_words(dialog: HealDialog) -> list[str]:
    """Texts the dialog shows that speak in command-line options ("--regex …")."""
    from PySide6.QtWidgets import QGroupBox, QLabel

    shown = [w.text() for w in dialog.findChildren(QLabel) if w.isVisible()]
    shown += [g.title() for g in dialog.findChildren(QGroupBox)]
    return [t for t in shown if "--" in t]


def heal_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("heal") and t.is_alive()]


# -- the doctor panel ------------------------------------------------------------------------


def test_models_pass_modeltester(qtmodeltester, poisoned: Path, tmp_path: Path) -> None:
    doc = load(poisoned)
    found = checkup(doc)
    from loom_core.views.timeline import build_timeline

    tl = build_timeline(doc)
    findings = FindingsModel()
    findings.set_findings(found.findings, [locate(f, doc, tl) for f in found.findings])
    qtmodeltester.check(findings)
    assert findings.rowCount() == len(found.findings) == 2
    candidates = CandidatesModel()
    candidates.set_candidates(Healer(doc, poisoned, Check(), None, tmp_path).plan(found.findings))
    qtmodeltester.check(candidates)
    assert candidates.rowCount() == 2


def test_panel_lists_marks_and_shows_a_finding_in_context(
    qtbot, window: MainWindow, open_and_wait, poisoned: Path, tmp_path: Path
) -> None:
    view = open_and_wait(window, poisoned)
    show_doctor(qtbot, window, view)
    panel = window.doctor
    kinds = [panel.model.finding_at(r).kind for r in range(panel.model.rowCount())]
    assert kinds == ["oversized", "unused"]  # loom doctor's order, not by step
    row = kinds.index("oversized")
    assert panel.summary.text().startswith(
        f"2 finding(s) in {checkup(view.doc).total_tokens:,} tokens"
    )
    assert panel.model.index(row, F_STEP).data() == str(POISON_SEQ)  # as `doctor` prints it
    # where a click goes, and why it is not the finding's own step, said before the click
    assert panel.model.headerData(F_SEEN, Qt.Orientation.Horizontal) == "Seen at"
    assert panel.model.index(row, F_SEEN).data() == str(MODEL_SEQ)
    tip = panel.model.index(row, F_STEP).data(Qt.ItemDataRole.ToolTipRole)
    assert f"first seen by the model call at step {MODEL_SEQ}" in tip
    assert panel.model.index(row, F_SHARE).data() == "97.5%"
    assert "IGNORE ALL PREVIOUS" in panel.model.index(row, F_SNIPPET).data()
    # one arrow per finding above its step's bar, red for the high one
    marks = panel_marks(view)
    assert sorted(marks) == [POISON_STEP - 1, POISON_STEP]
    assert marks[POISON_STEP] == "#d32f2f"
    # a click goes to the first model step that saw the item, marked in the context view
    assert view.session.step != MODEL_STEP
    rect = panel.table.visualRect(panel.model.index(row, F_MESSAGE))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.session.step == MODEL_STEP
    assert view.context_view.state.highlight == POISON_SEQ
    html = view.context_view.browser.toHtml()
    mark = HIGHLIGHT_MARK.split(" ", 1)[1]  # Qt writes the flag back as an entity
    assert mark in html and HIGHLIGHT_BG in html and 'name="finding"' in html
    assert html.count(mark) == 1  # only the fetch_page result is marked
    marked = html[html.index('name="finding"') :]
    assert "fetch_page" in marked[:2000] and "IGNORE ALL PREVIOUS" in marked[:4000]
    window.grab().save(str(tmp_path / "doctor_window.png"))
    panel.grab().save(str(tmp_path / "doctor_panel.png"))
    # the other tab's findings are its own; coming back shows the cached checkup
    other = open_and_wait(window, poisoned)
    qtbot.waitUntil(lambda: id(other) in panel.results, timeout=20_000)
    window.tabs.setCurrentWidget(view)
    assert panel.model.rowCount() == 2


def test_a_live_run_is_checked_on_refresh(
    qtbot, window: MainWindow, poisoned: Path, tmp_path: Path
) -> None:
    data = json.loads(poisoned.read_text())
    journal = tmp_path / "live.journal.jsonl"
    with JournalWriter(journal) as writer:
        writer.header(data["model"], data["system"], data["episodes"], data["log"][:3])
    view = window.open_path(str(journal))
    assert view.live is not None
    window.doctor.show()
    qtbot.waitUntil(lambda: view.complete and len(view.doc.effects) == 3, timeout=20_000)
    panel = window.doctor
    assert panel.summary.text().startswith("live run: press Refresh")
    assert panel.model.rowCount() == 0 and id(view) not in panel.results
    panel.refresh_btn.click()
    qtbot.waitUntil(lambda: id(view) in panel.results, timeout=20_000)
    found = [panel.model.finding_at(r) for r in range(panel.model.rowCount())]
    assert [f.kind for f in found].count("oversized") == 1  # nothing answered yet: all unused too
    assert {f.step for f in found} == {POISON_SEQ - 1, POISON_SEQ}
    assert sorted(panel_marks(view)) == [POISON_STEP - 1, POISON_STEP]
    assert panel.heal() is None and "still being recorded" in panel.notices[-1]


def panel_marks(view: DocumentView) -> dict[int, str]:
    spots = view.timeline_widget.findings.points()
    return {int(s.pos().x()): s.brush().color().name() for s in spots}


# -- heal ------------------------------------------------------------------------------------


def test_heal_fills_the_table_live_opens_the_winner_and_saves_a_regression(
    qtbot,
    window: MainWindow,
    open_and_wait,
    poisoned: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    runs_dir: Path,
) -> None:
    use_provider(monkeypatch, lambda: ScriptedProvider(responder=fooled_model))
    view = open_and_wait(window, poisoned)
    window.doctor.toggleViewAction().trigger()
    dialog = open_heal(qtbot, window, view, window.doctor.heal_action.trigger)  # Run ▸ Heal…
    labels = [c.label for c in dialog.plan.candidates]
    assert len(labels) == 2 and labels[0].startswith("redact-oversized-")
    assert dialog.model.index(0, 2).data() == f"step {MODEL_SEQ}"  # as `heal` prints it
    set_check(qtbot, dialog, "forbid", BAD)
    assert dialog.check_label.text() == f"✓ passes when the output lacks {BAD!r}"
    assert dialog.start_btn.isEnabled(), dialog.settings.available.text()
    seen: list[str] = []
    tabs_before = window.tabs.count()
    dialog.start_btn.click()
    dialog.runner.updated.connect(lambda c: seen.append(f"{c.label}:{c.status}"))
    qtbot.waitUntil(lambda: dialog.result is not None, timeout=30_000)
    winner = labels[0]
    assert f"{winner}:running" in seen and f"{winner}:passed" in seen  # live, in order
    assert seen.index(f"{winner}:running") < seen.index(f"{winner}:passed")
    assert (
        dialog.model.index(0, 4).data() == "passed" and dialog.model.index(0, 7).data() == "✓ pass"
    )
    assert dialog.model.index(0, 5).data() == "45" and dialog.model.index(0, 6).data()
    assert dialog.result_label.text().startswith(f"Healed by {winner}: ")
    dialog.grab().save(str(tmp_path / "heal_dialog.png"))
    # the winner as a branch tab, and a compare tab against the original
    assert window.tabs.count() == tabs_before + 2
    branch = next(w for w in window.documents() if w.path == dialog.result.winner.path)
    assert Path(branch.path).parent == runs_dir / f"{poisoned.name[: -len('.loom.json')]}.heal"
    assert not any(p.name.endswith(".heal") for p in poisoned.parent.iterdir())  # none beside
    qtbot.waitUntil(lambda: branch.complete, timeout=20_000)
    assert branch.doc.header.output == GOOD
    # named as the heal's winner (a fork of the same step reads otherwise), and counted
    # among the original's branches
    title = window.tabs.tabText(window.tabs.indexOf(branch))
    assert title == f"heal of {poisoned.name} at step {MODEL_SEQ} · {winner}", title
    assert f"Heal winner ({winner}) of" in branch.findChild(BranchBar).title.text()
    qtbot.waitUntil(lambda: any(b.entries for b in view.findChildren(BranchesBar)), timeout=20_000)
    (entry,) = view.findChildren(BranchesBar)[0].entries
    assert f"heal winner {winner}" in entry[0] and entry[1] == branch.path
    compare = window.tabs.currentWidget()
    assert isinstance(compare, CompareView)
    assert compare.title == f"{poisoned.name} ⟷ {Path(branch.path).name}"
    qtbot.waitUntil(lambda: compare.state == "ready", timeout=20_000)
    # save as regression trace: a directory picker, then healed-<hash>.loom.json there
    target = tmp_path / "regressions"
    monkeypatch.setattr(heal_runner, "pick_directory", lambda _parent, _start: str(target))
    assert dialog.save_btn.isEnabled()
    dialog.save_btn.click()
    saved = list(target.glob("healed-*.loom.json"))
    assert len(saved) == 1 and str(saved[0]) in dialog.result_label.text()
    assert json.loads(saved[0].read_text())["healed_by"] == winner
    done = loom("trace", "verify", saved[0])
    assert done.returncode == 0, done.stdout + done.stderr
    assert not heal_threads()


def test_cancel_mid_run_and_close_while_running_leave_no_thread(
    qtbot,
    window: MainWindow,
    open_and_wait,
    poisoned: Path,
    monkeypatch: pytest.MonkeyPatch,
    gate: threading.Event,
) -> None:
    use_provider(monkeypatch, lambda: BlockingProvider(gate))
    view = open_and_wait(window, poisoned)
    window.doctor.show()
    dialog = open_heal(qtbot, window, view, window.doctor.heal_btn.click)  # the panel's button
    set_check(qtbot, dialog, "forbid", BAD)
    dialog.start_btn.click()
    assert gate.wait(20), "no candidate started"
    qtbot.waitUntil(lambda: dialog.model.index(0, 4).data() == "running", timeout=10_000)
    assert dialog.cancel_btn.isEnabled() and not dialog.start_btn.isEnabled()
    dialog.cancel_btn.click()
    qtbot.waitUntil(lambda: dialog.result is not None, timeout=20_000)
    assert dialog.result.status == "cancelled" and dialog.result_label.text().startswith(
        "Cancelled"
    )
    assert {dialog.model.index(r, 4).data() for r in range(2)} == {"cancelled"}
    assert not dialog.runner.running and not heal_threads()
    assert dialog.start_btn.isEnabled()  # it can be started again
    # closing the dialog while a heal runs cancels it and waits for it
    gate.clear()
    dialog.start_btn.click()
    assert gate.wait(20), "the second run did not start"
    runner = dialog.runner
    dialog.close()
    assert not runner.running and not heal_threads()
    qtbot.waitUntil(lambda: not window.doctor.dialogs, timeout=5_000)


def test_bad_checks_and_unusable_providers_keep_start_disabled(
    qtbot, window: MainWindow, open_and_wait, poisoned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = open_and_wait(window, poisoned)
    dialog = open_heal(qtbot, window, view)
    assert dialog.check_label.text().startswith("✗ a check is needed")  # nothing typed yet
    assert not dialog.start_btn.isEnabled() and not cli_words(dialog)
    assert not dialog.settings.agent_mode.isEnabled()  # no workspace recorded: model re-run only
    assert "record" in dialog.settings.agent_mode.toolTip()
    set_check(qtbot, dialog, "regex", "(")
    assert dialog.check_label.text().startswith(
        "✗ the regular expression '(' is not valid: missing ), unterminated subpattern"
    )
    assert dialog.check is None and not dialog.start_btn.isEnabled() and not cli_words(dialog)
    dialog.fields["regex"].clear()
    set_check(qtbot, dialog, "function", "no_such_module_h10:check")
    assert "cannot import no_such_module_h10" in dialog.check_label.text()
    assert not dialog.start_btn.isEnabled() and not cli_words(dialog)
    dialog.fields["function"].clear()
    set_check(qtbot, dialog, "forbid", BAD)
    assert dialog.start_btn.isEnabled()
    # a provider without its key: the availability line says so and Start stays off
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    combo = dialog.settings.provider
    combo.setCurrentIndex(combo.findData("anthropic"))
    set_check(qtbot, dialog, "forbid", BAD)
    assert dialog.settings.available.text().startswith("✗"), dialog.settings.available.text()
    assert "ANTHROPIC_API_KEY" in dialog.settings.available.text()
    assert not dialog.start_btn.isEnabled()


def test_a_run_that_already_passes_is_left_alone(
    qtbot, window: MainWindow, open_and_wait, poisoned: Path
) -> None:
    view = open_and_wait(window, poisoned)
    dialog = open_heal(qtbot, window, view)
    set_check(qtbot, dialog, "require", BAD)
    tabs = window.tabs.count()
    dialog.start_btn.click()
    qtbot.waitUntil(lambda: dialog.result is not None, timeout=20_000)
    assert dialog.result_label.text() == (
        f"{poisoned.name} already passes (output contains {BAD!r}): nothing to heal"
    )
    assert dialog.model.rowCount() == 0 and window.tabs.count() == tabs
    # the plan's line no longer says repairs are planned as if they were still to run
    assert dialog.candidates.plan_label.text().endswith("none was tried: the run already passes.")
    dialog.candidates.show_running(dialog.plan.candidates, str(poisoned.parent))  # run again
    assert "none was tried" not in dialog.candidates.plan_label.text()
    assert not dialog.save_btn.isEnabled() and not (poisoned.parent / "poisoned.loom.heal").exists()


def test_a_failing_heal_is_an_error_dialog_naming_the_file(
    qtbot, window: MainWindow, open_and_wait, poisoned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(name: str, model: str, base_url: str | None) -> Any:
        raise ValueError(f"provider {name} is not usable: the test says no")

    monkeypatch.setattr(heal_runner, "provider_factory", broken)
    view = open_and_wait(window, poisoned)
    dialog = open_heal(qtbot, window, view)
    set_check(qtbot, dialog, "forbid", BAD)
    dialog.start_btn.click()
    qtbot.waitUntil(lambda: dialog.runner.ended, timeout=20_000)
    assert window.errors and str(poisoned) in window.errors[-1]
    assert (
        "the test says no" in window.errors[-1] and "the test says no" in dialog.result_label.text()
    )
    boxes = [w for w in dialog.findChildren(QMessageBox) if w.isVisible()]
    assert boxes and "the test says no" in boxes[0].text()


def test_menus_shortcut_and_heal_needs_a_loaded_trace(window: MainWindow) -> None:
    toggle = window.doctor.toggleViewAction()
    assert toggle.shortcut().toString() == "Ctrl+Shift+K" and toggle in window.actions()
    menus = {a.text(): a.menu() for a in window.menuBar().actions()}
    assert toggle in menus["&View"].actions()
    assert window.doctor.heal_action in menus["&Run"].actions()
    toggle.trigger()
    assert (
        window.doctor.isVisible()
        and window.doctor.summary.text() == "open a run to check its context"
    )
    assert window.doctor.heal() is None
    assert window.doctor.notices == ["Heal: open a trace and wait until it is loaded."]


def test_heal_attempts_go_to_the_runs_folder_or_a_chosen_one(
    tmp_path: Path, runs_dir: Path
) -> None:
    from loom_desktop.features.heal.runner import out_dir_for

    run = tmp_path / "x.loom.json"
    assert out_dir_for(run) == runs_dir / "x.heal"
    (runs_dir / "x.heal").mkdir(parents=True)
    (runs_dir / "x.heal" / "a.loom.json").write_text("{}")  # an earlier heal's attempts stay
    assert out_dir_for(run) == runs_dir / "x.heal-2"
    assert out_dir_for(run, tmp_path / "mine") == tmp_path / "mine" / "x.heal"
