"""Fork from here… in the app: entry points, the dialog's Edit, runs streamed into branch tabs,
provider errors, cancel, a paused branch continued, agent mode, parent ⟷ branch links."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from loom_core.fork.point import apply_edit, fork_context
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict
from loom_core.providers.base import ModelRequest
from loom_core.providers.scripted import ScriptedProvider
from loom_core.views import context
from loom_desktop.document.view import DocumentView
from loom_desktop.features.compare.view import CompareView
from loom_desktop.features.fork import runner as fork_runner
from loom_desktop.features.fork.branch_bar import BranchBar, BranchesBar
from loom_desktop.features.fork.dialog import ForkDialog
from loom_desktop.features.fork.draft import ForkDraft
from loom_desktop.features.fork.links import find_branches, fork_member
from loom_desktop.features.fork.runner import branch_path
from loom_desktop.main_window import MainWindow
from tests.core.clis import loom
from tests.core.fork.scenarios import proxy_run, weather_run
from tests.core.forkmode.conftest import NOTE as FRENCH
from tests.core.forkmode.conftest import record_parent, responder
from tests.core.proxy.fake_upstream import FakeUpstream, api_error
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, running_upstream

FAKE_KEY = "sk-ant-fake-" + "0" * 20
SEQ, STEP = 3, 4  # weather: the second model call is step (seq) 3, list row 4 (after the prompt)
TITLE = f"fork of weather.loom.json at step {SEQ}"  # a step is named by its seq, never its row


# -- helpers -------------------------------------------------------------------------------


@pytest.fixture
def weather(tmp_path: Path) -> Path:
    """Steps: 0 prompt, 1 model, 2-3 tools, 4 model, 5 tool, 6 model (loom-harness's own run)."""
    return weather_run(tmp_path)


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """Holds a scripted model mid-run; always opened at teardown so no thread is left waiting."""
    event = threading.Event()
    yield event
    event.set()


def use_provider(monkeypatch: pytest.MonkeyPatch, provider: ScriptedProvider) -> None:
    """The seam: the app builds every "scripted" provider through fork_runner.make_provider."""
    real = fork_runner.make_provider
    monkeypatch.setattr(
        fork_runner,
        "make_provider",
        lambda name, model="", base_url=None: (
            provider if name == "scripted" else real(name, model, base_url)
        ),
    )


def paris_then(
    gate: threading.Event | None = None, final: str = "Paris is mild."
) -> ScriptedProvider:
    """Asks for Paris (answered from the parent's recording), then -- once ``gate`` opens --
    answers with ``final``."""
    calls: list[ModelRequest] = []

    def respond(request: ModelRequest) -> dict[str, Any]:
        calls.append(request)
        if len(calls) == 1:
            return {"text": "", "tool_calls": [{"name": "get_weather", "input": {"city": "Paris"}}]}
        if gate is not None:
            assert gate.wait(20), "the test never opened the gate"
        return {"text": final, "usage": {"input_tokens": 60, "output_tokens": 6}}

    return ScriptedProvider(responder=respond)


def titled(text: str, title: str) -> bool:
    """A branch tab's title is ``title`` followed by its edit (`` · note injected``)."""
    return text == title or text.startswith(title + " · ")


def tab_titled(window: MainWindow, title: str) -> Any:
    for i in range(window.tabs.count()):
        if titled(window.tabs.tabText(i), title):
            return window.tabs.widget(i)
    return None


def open_dialog(qtbot, window: MainWindow, view: DocumentView, step: int = STEP) -> ForkDialog:
    dialog = window.forks.fork_from_here(view, step)
    assert isinstance(dialog, ForkDialog)
    qtbot.waitUntil(lambda: dialog.ready and dialog.plan is not None, timeout=20_000)
    return dialog


def wait_estimate(qtbot, dialog: ForkDialog, check) -> None:
    qtbot.waitUntil(
        lambda: (
            not dialog._timer.isActive()
            and not dialog._plan_task.running
            and dialog.plan is not None
            and check(dialog.plan)
        ),
        timeout=20_000,
    )


def branch_tabs(window: MainWindow, title: str = TITLE) -> list[Any]:
    return [
        window.tabs.widget(i)
        for i in range(window.tabs.count())
        if titled(window.tabs.tabText(i), title)
    ]


def wait_branch(
    qtbot, window: MainWindow, path: Path | None = None, title: str = TITLE
) -> DocumentView:
    """The finished branch (at ``path``, else the only one): a trace tab with its branch bar."""

    def found() -> Any:
        return next(
            (
                v
                for v in branch_tabs(window, title)
                if isinstance(v, DocumentView)
                and (path is None or Path(v.path) == path)
                and v.complete
                and v.doc is not None
                and v.doc.format == "trace"
                and v.findChild(BranchBar) is not None
            ),
            None,
        )

    qtbot.waitUntil(lambda: found() is not None, timeout=30_000)
    return found()


def render(qtbot, view: DocumentView, path: Path) -> None:
    """A PNG of a tab once its bars are shown and its plot is built (looked at by hand)."""
    bar = view.findChild(BranchBar)
    view.ensure_timeline()
    qtbot.waitUntil(lambda: bar.isVisible() and view.timeline_widget.isVisible(), timeout=5000)
    view.flush_render()
    assert view.grab().save(str(path))


def verified(path: str | Path) -> dict[str, Any]:
    done = loom("trace", "verify", path)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(Path(path).read_text())


def start(dialog: ForkDialog) -> None:
    qtbot_wait_enabled = dialog.start_btn.isEnabled()
    assert qtbot_wait_enabled, dialog.estimate_label.text()
    dialog.start_btn.click()


# -- the Edit mapping, without a window ------------------------------------------------------


def test_untouched_draft_is_an_empty_edit_and_each_change_maps(weather: Path) -> None:
    doc = load(weather)
    ctx = fork_context(doc, weather, SEQ)
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "tool", "tool"]
    draft = ForkDraft(ctx)
    assert draft.to_edit(ctx.model).is_empty()

    draft.note = "Only Oslo matters."
    draft.system = "You forecast briefly."
    draft.set_redacted(2, True)  # Paris: reading 1 (log seq 1)
    draft.set_tool(0, False)
    edit = draft.to_edit("claude-opus-4-1", " try a hint ")
    assert edit.inject == "Only Oslo matters." and edit.system == "You forecast briefly."
    assert edit.redact == [1] and edit.tools == [] and edit.model == "claude-opus-4-1"
    assert edit.messages == [] and edit.reason == "try a hint"
    out = apply_edit(ctx, edit)
    assert out.messages[2]["content"] == edit.redact_text
    assert out.messages[-1]["content"] == "Only Oslo matters." and out.tools == []
    assert draft.to_edit(ctx.model).model is None  # the recorded model is no change


def test_message_edits_map_to_ops_in_apply_order(weather: Path) -> None:
    ctx = fork_context(load(weather), weather, SEQ)
    draft = ForkDraft(ctx)
    draft.set_text(0, "Weather in Oslo only?")
    at = draft.insert_user(1, "Be brief.")
    draft.delete(at + 2)  # "Paris: reading 1" -- its call is left unanswered
    assert draft.warnings() and "without its result" in draft.warnings()[0]
    edit = draft.to_edit()
    assert [(op.op, op.index) for op in edit.messages] == [
        ("replace", 0),
        ("insert", 1),
        ("delete", 3),
    ]
    out = apply_edit(ctx, edit)
    assert [m["content"] for m in out.messages] == [
        "Weather in Oslo only?",
        "Be brief.",
        "Checking.",
        "Oslo: reading 1",
    ]
    assert out.messages[0]["tokens"] == len("Weather in Oslo only?") // 4
    draft.restore(at + 2)
    draft.set_redacted(at + 2, True)
    draft.set_text(at + 2, "rewritten")  # a rewrite wins over the redaction
    assert draft.to_edit().redact == [] and draft.to_edit().messages[-1].op == "replace"
    draft.revert(at + 2)
    empty = draft.insert_user(0)
    assert "empty" in draft.warnings()[-1] and draft.to_edit().messages[1].op == "insert"
    draft.delete(empty)
    draft.delete(at)  # an inserted message simply goes away
    assert [op.op for op in draft.to_edit().messages] == ["replace"]
    with pytest.raises(ValueError):
        draft.set_redacted(0, True)  # a user message is not a tool result


# -- entry points ------------------------------------------------------------------------------


def test_context_menu_and_f_open_the_dialog_only_on_top_level_model_steps(
    qtbot, window: MainWindow, open_and_wait, weather: Path, sample: Path
) -> None:
    view = open_and_wait(window, weather)
    forks = window.forks
    menu = forks.step_menu(view, 2)  # a tool step: row 2 is step (seq) 1
    (item,) = menu.actions()
    assert not item.isEnabled() and "pick a model step" in item.text()
    assert item.toolTip().startswith("step 1 is a tool:get_weather step")
    (item,) = forks.step_menu(view, 0).actions()  # the user prompt row
    assert item.toolTip().startswith("a user prompt is not a step")
    # the real right-click path: a popup menu whose item opens the dialog
    rect = view.table.visualRect(view.model.index(STEP, 3))
    view.table.customContextMenuRequested.emit(rect.center())
    assert view.session.step == STEP
    (item,) = forks.last_menu.actions()
    assert item.isEnabled() and item.text() == "Fork from Here…"
    forks.last_menu.close()
    item.trigger()
    qtbot.waitUntil(lambda: len(forks.dialogs) == 1 and forks.dialogs[0].ready, timeout=20_000)
    dialog = forks.dialogs[0]
    assert dialog.seq == SEQ and dialog.windowTitle() == "Fork weather.loom.json at step 3"
    assert "at step 3</b>" in dialog.header.text() and "seq" not in dialog.header.text()
    dialog.reject()
    qtbot.waitUntil(lambda: not forks.dialogs, timeout=5000)

    view.session.set_step(3)  # a tool step: F explains instead of opening
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_F)
    assert forks.notices and "pick a model step" in forks.notices[-1] and not forks.dialogs
    forks.last_notice.close()
    view.session.set_step(6)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    qtbot.keyClick(view.table, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: len(forks.dialogs) == 1, timeout=5000)
    assert forks.dialogs[0].seq == 5 and forks.dialogs[0].windowTitle().endswith("at step 5")
    forks.dialogs[0].reject()
    qtbot.waitUntil(lambda: not forks.dialogs, timeout=5000)

    plot_menu = view.timeline_widget.getPlotItem().getViewBox().menu  # forks at the cursor
    qtbot.waitUntil(
        lambda: any(a.text() == "Fork from Here…" for a in plot_menu.actions()), timeout=5000
    )
    view.session.set_step(1)
    next(a for a in plot_menu.actions() if a.text() == "Fork from Here…").trigger()
    qtbot.waitUntil(lambda: len(forks.dialogs) == 1, timeout=5000)
    assert forks.dialogs[0].seq == 0 and forks.dialogs[0].windowTitle().endswith("at step 0")
    forks.dialogs[0].reject()

    deep = open_and_wait(window, sample)  # a sub-agent's model step (depth 1)
    step = next(
        s
        for s in range(len(deep.session.timeline))
        if deep.session.timeline.kind_name(s) == "model" and deep.session.timeline.depth[s]
    )
    (item,) = forks.step_menu(deep, step).actions()
    assert not item.isEnabled() and "only top-level" in item.text()
    assert forks.fork_from_here(deep, step) is None
    assert "only top-level model steps" in forks.notices[-1]
    qtbot.waitUntil(lambda: not forks.dialogs, timeout=5000)


def test_dialog_shows_the_context_and_a_dry_run_that_follows_the_edit(
    qtbot, window: MainWindow, open_and_wait, weather: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    walks: list[object] = []  # the run's log walked again for the fork (the tab's is kept)
    real_walk = context.build_context
    monkeypatch.setattr(context, "build_context", lambda doc: walks.append(doc) or real_walk(doc))
    view = open_and_wait(window, weather)
    dialog = open_dialog(qtbot, window, view)
    assert dialog.messages.table.rowCount() == 4 and dialog.system.toPlainText() == "You forecast."
    assert dialog.tools.count() == 1 and dialog.settings.provider_name() == "anthropic"
    assert dialog.settings.model_text() == "claude-sonnet-4-5"
    wait_estimate(qtbot, dialog, lambda plan: True)
    text = dialog.estimate_label.text()
    assert "Replays free: 3 step(s)" in text and "Runs live: ~2 model call(s) (max 20)" in text
    assert "Tokens: ~" in text and "Cost: ~$" in text
    assert "ANTHROPIC_API_KEY is not set" in dialog.settings.available.text()
    assert not dialog.start_btn.isEnabled()  # no key, no base URL: nothing can run
    dialog.settings.max_turns.setValue(1)
    dialog.note.setPlainText("Only Oslo matters.")
    wait_estimate(qtbot, dialog, lambda plan: plan.live_calls == 1 and plan.edit == "note injected")
    assert "Runs live: ~1 model call(s) (max 1)" in dialog.estimate_label.text()
    dialog.settings.provider.setCurrentIndex(dialog.settings.provider.findData("scripted"))
    wait_estimate(qtbot, dialog, lambda plan: plan.provider == "scripted")
    assert dialog.settings.available.text().startswith("✓ offline")
    assert dialog.start_btn.isEnabled()
    dialog.messages.table.setCurrentCell(2, 3)
    assert dialog.messages.caption.text().endswith("recorded at step 1")  # Paris: its seq
    dialog.messages.redact_btn.click()
    dialog.tools.item(0).setCheckState(Qt.CheckState.Unchecked)
    wait_estimate(qtbot, dialog, lambda plan: "redacted 1" in plan.edit)
    edit = dialog.edit()
    assert edit.redact == [1] and edit.tools == [] and edit.inject == "Only Oslo matters."
    assert dialog.messages.table.item(2, 4).text() == "redacted"
    dialog.messages.table.setCurrentCell(0, 3)
    dialog.messages.insert_btn.click()  # a user message after the prompt, typed in the editor
    dialog.messages.editor.setPlainText("Answer in one line.")
    dialog.messages.table.setCurrentCell(4, 3)
    dialog.messages.delete_btn.click()  # the Oslo result: deleting it leaves its call open
    assert dialog.messages.table.item(4, 4).text() == "deleted"
    assert dialog.messages.delete_btn.text() == "Restore"
    qtbot.waitUntil(lambda: dialog.warnings.isVisibleTo(dialog), timeout=5000)
    assert "without its result" in dialog.warnings.text()
    ops = [(op.op, op.index, (op.message or {}).get("content")) for op in dialog.edit().messages]
    assert ops == [("insert", 1, "Answer in one line."), ("delete", 4, None)]
    dialog.system.setPlainText("Be terse.")
    assert dialog.edit().system == "Be terse."
    assert view.doc not in walks  # the frame and every estimate: the tab's walk, no other
    dialog.reject()


def test_message_editor_shows_tool_output_in_a_monospace_font(qtbot) -> None:
    """Tool output is columns and code: a proportional font scrambled it."""
    from PySide6.QtGui import QFontMetrics

    from loom_desktop.features.fork.messages import MessageEditor

    editor = MessageEditor()
    qtbot.addWidget(editor)
    metrics = QFontMetrics(editor.editor.font())
    assert metrics.horizontalAdvance("iiii") == metrics.horizontalAdvance("MMMM")


# -- running -----------------------------------------------------------------------------------


def test_scripted_fork_streams_into_a_branch_tab_linked_both_ways(
    qtbot,
    window: MainWindow,
    open_and_wait,
    weather: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gate: threading.Event,
    runs_dir: Path,
) -> None:
    use_provider(monkeypatch, paris_then(gate))
    parent = open_and_wait(window, weather)
    dialog = open_dialog(qtbot, window, parent)
    dialog.settings.provider.setCurrentIndex(dialog.settings.provider.findData("scripted"))
    dialog.note.setPlainText("Only Paris matters.")
    dialog.settings.reason.setText("try a hint")
    wait_estimate(
        qtbot, dialog, lambda plan: plan.provider == "scripted" and plan.edit == "note injected"
    )
    dialog.grab().save(str(tmp_path / "fork_dialog.png"))
    start(dialog)

    # live: prompt + 3 prefix steps + edit + model + reused tool result, then it waits
    qtbot.waitUntil(
        lambda: (
            isinstance(tab_titled(window, "● " + TITLE), DocumentView)
            and tab_titled(window, "● " + TITLE).session.count >= 7
        ),
        timeout=20_000,
    )
    live = tab_titled(window, "● " + TITLE)
    assert live.live is not None and live.path == str(runs_dir / "weather.fork3.journal.jsonl")
    bar = live.findChild(BranchBar)
    assert bar.status == "running" and bar.cancel_btn.isVisibleTo(bar)
    qtbot.waitUntil(lambda: "1 live call(s)" in bar.detail.text(), timeout=5000)
    gate.set()

    branch = wait_branch(qtbot, window)
    out = runs_dir / "weather.fork3.loom.json"  # the per-user runs folder, not the parent's
    assert Path(branch.path) == out and window.tabs.currentWidget() is branch
    assert branch.findChild(BranchBar).where.toolTip() == str(out)
    assert branch.findChild(BranchBar).where.text() == f"saved in {runs_dir}"
    data = verified(out)
    assert data["fork"]["status"] == "done" and data["fork"]["reason"] == "try a hint"
    assert data["output"] == "Paris is mild."
    assert [e["kind"] for e in data["log"][3:]] == ["edit", "model", "tool:get_weather", "model"]
    bar = branch.findChild(BranchBar)
    assert "Fork of" in bar.title.text() and "at step 3 —" in bar.title.text()
    assert window.tabs.tabText(window.tabs.indexOf(branch)) == f"{TITLE} · note injected"
    assert bar.parent_btn.text() == "Parent at step 3"
    assert "note injected" in bar.title.text() and "done" in bar.title.text()
    render(qtbot, branch, tmp_path / "branch_tab.png")

    bar.parent_requested.emit()  # branch -> parent, at the fork step
    assert window.tabs.currentWidget() is parent and parent.session.step == STEP
    qtbot.waitUntil(
        lambda: (
            parent.findChild(BranchesBar) is not None
            and bool(parent.findChild(BranchesBar).entries)
        ),
        timeout=10_000,
    )
    ((label, path),) = parent.findChild(BranchesBar).entries
    assert label.startswith("step 3 · note injected · done") and Path(path) == out
    parent.findChild(BranchesBar).menu.actions()[0].trigger()  # parent -> branch
    assert window.tabs.currentWidget() is branch

    bar.compare_requested.emit()
    compare = window.tabs.currentWidget()
    assert isinstance(compare, CompareView)
    qtbot.waitUntil(lambda: compare.state in ("ready", "failed"), timeout=30_000)
    assert compare.state == "ready"


def test_branches_beside_a_parent_are_found_from_their_fork_member(
    weather: Path, tmp_path: Path, runs_dir: Path
) -> None:
    from loom_core.fork.edits import Edit
    from loom_core.fork.rerun import run_fork

    doc = load(weather)
    run_fork(doc, weather, SEQ, Edit(inject="x"), ScriptedProvider(), out=tmp_path / "a.loom.json")
    run_fork(doc, weather, 5, Edit(), ScriptedProvider(), out=tmp_path / "b.loom.json")
    save_dict(
        {
            **json.loads((tmp_path / "b.loom.json").read_text()),
            "fork": {"parent": {"path": str(tmp_path / "other.loom.json")}},
        },
        tmp_path / "c.loom.json",
    )
    runs_dir.mkdir()  # the per-user runs folder is searched too
    run_fork(doc, weather, 3, Edit(system="x"), ScriptedProvider(), out=runs_dir / "d.loom.json")
    found = sorted(find_branches(weather), key=lambda b: Path(b.path).name)
    assert [(Path(b.path).name, b.seq, b.status, b.edit) for b in found] == [
        ("a.loom.json", 3, "done", "note injected"),
        ("b.loom.json", 5, "done", "no edit"),
        ("d.loom.json", 3, "done", "system prompt replaced"),
    ]
    assert fork_member(weather) is None


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeUpstream]:
    """A fake Anthropic API on 127.0.0.1; a fake key in the environment."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with running_upstream() as fake:
        yield fake


def test_anthropic_provider_against_the_fake_upstream_and_its_errors(
    qtbot,
    window: MainWindow,
    open_and_wait,
    weather: Path,
    tmp_path: Path,
    upstream: FakeUpstream,
    runs_dir: Path,
) -> None:
    upstream.script(
        Reply(calls=[("n1", "get_weather", {"city": "Oslo"})], usage=(80, 8)),
        Reply(text="Oslo is cold.", usage=(90, 9)),
    )
    parent = open_and_wait(window, weather)
    dialog = open_dialog(qtbot, window, parent)
    assert dialog.settings.provider_name() == "anthropic"
    dialog.settings.base_url.setText(upstream.url)
    wait_estimate(qtbot, dialog, lambda plan: True)
    qtbot.waitUntil(
        lambda: "ANTHROPIC_API_KEY found" in dialog.settings.available.text(), timeout=10_000
    )
    assert FAKE_KEY not in dialog.settings.available.text()
    start(dialog)
    branch = wait_branch(qtbot, window)
    data = verified(branch.path)
    assert data["fork"]["provider"] == "anthropic" and data["output"] == "Oslo is cold."
    assert len(upstream.seen) == 2 and upstream.seen[0].body["model"] == "claude-sonnet-4-5"
    assert FAKE_KEY not in Path(branch.path).read_text()

    upstream.script(api_error(400, "invalid_request_error", "prompt is too long"))
    dialog = open_dialog(qtbot, window, parent)
    dialog.settings.base_url.setText(upstream.url)
    wait_estimate(qtbot, dialog, lambda plan: True)
    qtbot.waitUntil(dialog.start_btn.isEnabled, timeout=10_000)
    errors = len(window.errors)
    start(dialog)
    qtbot.waitUntil(lambda: len(window.errors) > errors, timeout=30_000)
    message = window.errors[-1]
    assert "anthropic claude-sonnet-4-5" in message and "prompt is too long" in message
    kept = runs_dir / "weather.fork3-2.loom.json"
    assert f"partial branch is kept: {kept}" in message
    assert verified(kept)["fork"]["status"] == "error"
    failed = wait_branch(qtbot, window, kept)  # the tab shows what was kept
    assert "provider error" in failed.findChild(BranchBar).title.text()


def held_run(
    qtbot,
    window: MainWindow,
    parent: DocumentView,
    monkeypatch: pytest.MonkeyPatch,
    gate: threading.Event,
) -> Any:
    """A scripted fork of ``parent`` streaming into its branch tab, held by ``gate`` at its
    second model call (the first asked for Paris); returns the run's ForkRunner."""
    use_provider(monkeypatch, paris_then(gate))
    dialog = open_dialog(qtbot, window, parent)
    dialog.settings.provider.setCurrentIndex(dialog.settings.provider.findData("scripted"))
    wait_estimate(qtbot, dialog, lambda plan: plan.provider == "scripted")
    start(dialog)
    qtbot.waitUntil(
        lambda: (
            tab_titled(window, "● " + TITLE) is not None
            and tab_titled(window, "● " + TITLE).session.count >= 7
        ),
        timeout=20_000,
    )
    return window.forks.tabs.runners[0]


def test_cancel_stops_the_run_and_keeps_the_partial_branch(
    qtbot,
    window: MainWindow,
    open_and_wait,
    weather: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gate: threading.Event,
) -> None:
    runner = held_run(qtbot, window, open_and_wait(window, weather), monkeypatch, gate)
    tab_titled(window, "● " + TITLE).findChild(BranchBar).cancel_btn.click()
    assert runner.token.cancelled
    gate.set()  # the scripted model "answers"; the cancelled run drops the answer
    branch = wait_branch(qtbot, window)
    data = verified(branch.path)
    assert data["fork"]["status"] == "cancelled"
    assert [e["kind"] for e in data["log"][3:]] == ["edit", "model", "tool:get_weather"]
    bar = branch.findChild(BranchBar)
    assert "cancelled" in bar.title.text() and bar.retry_btn.isVisibleTo(bar)
    assert not window.forks.tabs.runners
    bar.retry_btn.click()  # Continue: the same branch runs on from where it stopped
    qtbot.waitUntil(lambda: tab_titled(window, "● " + TITLE) is not None, timeout=10_000)
    done = wait_branch(qtbot, window)
    data = verified(done.path)
    assert done.path == branch.path and data["fork"]["status"] == "done"
    assert data["output"] == "Paris is mild."


def test_closing_a_running_branch_tab_cancels_it(
    qtbot,
    window: MainWindow,
    open_and_wait,
    weather: Path,
    monkeypatch: pytest.MonkeyPatch,
    gate: threading.Event,
) -> None:
    runner = held_run(qtbot, window, open_and_wait(window, weather), monkeypatch, gate)
    window.close_tab(window.tabs.indexOf(tab_titled(window, "● " + TITLE)))
    qtbot.waitUntil(lambda: runner.token.cancelled, timeout=5000)
    gate.set()
    qtbot.waitUntil(lambda: not window.forks.tabs.runners, timeout=10_000)
    assert tab_titled(window, TITLE) is None and tab_titled(window, "● " + TITLE) is None
    assert verified(runner.job.out)["fork"]["status"] == "cancelled"


def test_branch_names_are_unique_and_go_to_the_runs_folder(
    weather: Path, tmp_path: Path, runs_dir: Path
) -> None:
    first = branch_path(weather, 3)
    assert first == runs_dir / "weather.fork3.loom.json" and runs_dir.is_dir()
    assert branch_path(weather, 3, {str(first)}).name == "weather.fork3-2.loom.json"
    first.with_name("weather.fork3.journal.jsonl").write_text("")  # a run in progress
    assert branch_path(weather, 3).name == "weather.fork3-2.loom.json"
    chosen = branch_path(weather, 5, folder=tmp_path / "mine")
    assert chosen == tmp_path / "mine" / "weather.fork5.loom.json" and chosen.parent.is_dir()


def test_a_paused_branch_takes_a_tool_result_and_continues_in_the_same_tab(
    qtbot,
    window: MainWindow,
    open_and_wait,
    weather: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    def respond(request: ModelRequest) -> dict[str, Any]:
        last = request.messages[-1]
        if last.get("tool_call_id") != "rome":
            return {
                "text": "",
                "tool_calls": [{"id": "rome", "name": "get_weather", "input": {"city": "Rome"}}],
            }
        return {"text": f"Rome said {last['content']}"}

    use_provider(monkeypatch, ScriptedProvider(responder=respond))
    dialog = open_dialog(qtbot, window, open_and_wait(window, weather))
    dialog.settings.provider.setCurrentIndex(dialog.settings.provider.findData("scripted"))
    wait_estimate(qtbot, dialog, lambda plan: plan.provider == "scripted")
    start(dialog)
    branch = wait_branch(qtbot, window)
    bar = branch.findChild(BranchBar)
    assert bar.status == "needs_tool_result" and bar.pending.isVisibleTo(bar)
    assert json.loads(bar.pending.args.toPlainText()) == {"city": "Rome"}
    assert "get_weather" in bar.pending.label.text()
    render(qtbot, branch, tmp_path / "paused_branch.png")
    index = window.tabs.indexOf(branch)

    bar.pending.kind.setCurrentText("JSON")
    bar.pending.result.setPlainText("{not json")
    bar.pending.continue_btn.click()
    assert "not valid JSON" in bar.pending.error.text() and not window.forks.tabs.runners
    bar.pending.result.setPlainText('{"temp": 21}')
    bar.pending.continue_btn.click()
    qtbot.waitUntil(lambda: titled(window.tabs.tabText(index), "● " + TITLE), timeout=10_000)
    done = wait_branch(qtbot, window)
    assert window.tabs.indexOf(done) == index and done.path == branch.path
    data = verified(done.path)
    assert data["fork"]["status"] == "done" and data["output"] == "Rome said {'temp': 21}"
    supplied = data["log"][-2]
    assert supplied["result"] == {"temp": 21} and supplied["meta"]["supplied"] is True


def test_stop_here_ends_a_paused_branch(
    qtbot, window: MainWindow, open_and_wait, weather: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rome = {"text": "", "tool_calls": [{"name": "get_weather", "input": {"city": "Rome"}}]}
    use_provider(monkeypatch, ScriptedProvider([rome]))
    dialog = open_dialog(qtbot, window, open_and_wait(window, weather))
    dialog.settings.provider.setCurrentIndex(dialog.settings.provider.findData("scripted"))
    wait_estimate(qtbot, dialog, lambda plan: plan.provider == "scripted")
    start(dialog)
    branch = wait_branch(qtbot, window)
    branch.findChild(BranchBar).pending.stop_btn.click()
    qtbot.waitUntil(
        lambda: window.forks.tabs.runners == [] and tab_titled(window, TITLE) is not branch,
        timeout=10_000,
    )
    stopped = wait_branch(qtbot, window)
    assert verified(stopped.path)["fork"]["status"] == "stopped"
    assert "stopped here" in stopped.findChild(BranchBar).title.text()


# -- agent mode --------------------------------------------------------------------------------


def with_workspace(trace: Path, cwd: Path, argv: list[str]) -> Path:
    data = json.loads(trace.read_text())
    data["workspace"] = {
        "cwd": str(cwd),
        "argv": argv,
        "dialect": "anthropic",
        "os": "test",
        "python": "3",
        "recorded_at": "2026-01-01T00:00:00+00:00",
    }
    save_dict(data, trace)
    return trace


def test_agent_mode_needs_a_workspace_and_a_confirmation(
    qtbot,
    window: MainWindow,
    open_and_wait,
    weather: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dialog = open_dialog(qtbot, window, open_and_wait(window, weather))
    assert not dialog.settings.agent_mode.isEnabled()
    assert "record -- COMMAND" in dialog.settings.agent_mode.toolTip()
    dialog.reject()

    recorded = proxy_run(tmp_path / "rec", "anthropic")
    argv = [sys.executable, "-c", "print('agent ran')"]
    trace = with_workspace(recorded.path, tmp_path, argv)
    view = open_and_wait(window, trace)
    tl = view.session.timeline
    dialog = open_dialog(qtbot, window, view, step=tl.step_of_effect[2])  # the second model call
    assert dialog.settings.agent_mode.isEnabled()
    dialog.settings.agent_mode.setChecked(True)
    note = dialog.settings.agent_note.text()
    assert "will really run" in note and "agent ran" in note and str(tmp_path) in note
    dialog.tools.item(0).setCheckState(Qt.CheckState.Unchecked)  # the agent owns its tools
    qtbot.waitUntil(
        lambda: "cannot apply a tools edit" in (dialog.plan_error or ""), timeout=10_000
    )
    assert not dialog.start_btn.isEnabled() and "cannot run" in dialog.estimate_label.text()
    dialog.tools.item(0).setCheckState(Qt.CheckState.Checked)
    asked: list[str] = []

    def answer(reply):
        def question(parent, title, text, *args, **kwargs):
            asked.append(text)
            return reply

        return question

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.No))
    qtbot.waitUntil(dialog.start_btn.isEnabled, timeout=10_000)
    dialog.start_btn.click()
    assert asked and sys.executable in asked[0] and not window.forks.tabs.runners
    assert dialog.isVisible()
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
    errors = len(window.errors)
    dialog.start_btn.click()
    assert len(asked) == 2 and window.forks.tabs.runners[0].job.mode == "agent"
    qtbot.waitUntil(lambda: not window.forks.tabs.runners, timeout=30_000)
    assert len(window.errors) == errors + 1
    assert "exited with code 0" in window.errors[-1] and "no model call" in window.errors[-1]
    assert "agent ran" in window.errors[-1]


@pytest.fixture
def agent_upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeUpstream]:
    """The fork-mode tests' deterministic model (French when the note reaches it)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    with running_upstream(responder) as fake:
        yield fake


def test_agent_rerun_runs_the_recorded_agent_into_a_branch_tab(
    qtbot,
    window: MainWindow,
    open_and_wait,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent_upstream: FakeUpstream,
    runs_dir: Path,
) -> None:
    parent = record_parent(tmp_path, agent_upstream)  # steps: prompt, model, write, model, ...
    view = open_and_wait(window, parent.trace)
    dialog = open_dialog(qtbot, window, view, step=3)  # the second model call (log seq 2)
    dialog.note.setPlainText(FRENCH)
    dialog.settings.agent_mode.setChecked(True)
    wait_estimate(qtbot, dialog, lambda plan: plan.edit == "note injected")
    dialog.grab().save(str(tmp_path / "fork_dialog_agent.png"))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    qtbot.waitUntil(dialog.start_btn.isEnabled, timeout=10_000)
    dialog.start_btn.click()
    branch = wait_branch(qtbot, window, title="fork of parent.loom.json at step 2")
    data = verified(branch.path)
    assert Path(branch.path) == runs_dir / "parent.fork2.loom.json"
    assert data["fork"]["mode"] == "agent" and data["fork"]["status"] == "done"
    assert data["output"] == "La note dit : hello"
    assert (parent.workdir / "writes.txt").read_text() == "2"  # its tools really ran again
    title = branch.findChild(BranchBar).title.text()
    assert "note injected" in title and "done" in title


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_a_fork_of_the_bundled_sample_never_writes_beside_it(
    qtbot,
    window: MainWindow,
    open_and_wait,
    sample: Path,
    monkeypatch: pytest.MonkeyPatch,
    runs_dir: Path,
) -> None:
    """The sample's folder (the repository's resources/) stays as it was; the branch goes to
    the per-user runs folder, and the sample lists it from there."""
    before = _tree(sample.parent)
    use_provider(monkeypatch, ScriptedProvider())
    parent = open_and_wait(window, sample)
    tl = parent.session.timeline
    step = next(s for s in range(len(tl)) if tl.effect_of[s] == 14)  # the reviewer call
    dialog = open_dialog(qtbot, window, parent, step)
    dialog.settings.provider.setCurrentIndex(dialog.settings.provider.findData("scripted"))
    dialog.note.setPlainText("try again")
    wait_estimate(qtbot, dialog, lambda plan: plan.provider == "scripted")
    start(dialog)
    qtbot.waitUntil(
        lambda: any(
            isinstance(v, DocumentView)
            and v.complete
            and v.doc is not None
            and v.doc.format == "trace"
            and v.findChild(BranchBar)
            for v in window.documents()
        ),
        timeout=30_000,
    )
    branch = next(v for v in window.documents() if v.findChild(BranchBar))
    assert Path(branch.path).parent == runs_dir
    window.tabs.setCurrentWidget(parent)
    qtbot.waitUntil(
        lambda: (
            parent.findChild(BranchesBar) is not None
            and bool(parent.findChild(BranchesBar).entries)
        ),
        timeout=10_000,
    )
    assert parent.findChild(BranchesBar).label.text() == "↳ This run has 1 branch"
    assert _tree(sample.parent) == before


def test_a_chosen_folder_takes_the_branch(
    qtbot,
    window: MainWindow,
    open_and_wait,
    weather: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_provider(monkeypatch, ScriptedProvider())
    mine = tmp_path / "mine"
    monkeypatch.setattr(
        "PySide6.QtWidgets.QFileDialog.getExistingDirectory", lambda *a, **k: str(mine)
    )
    dialog = open_dialog(qtbot, window, open_and_wait(window, weather))
    dialog.settings.provider.setCurrentIndex(dialog.settings.provider.findData("scripted"))
    assert (
        dialog.settings.folder_text() == ""
        and "runs folder" in dialog.settings.folder.placeholderText()
    )
    dialog.settings.folder_btn.click()
    assert dialog.settings.folder_text() == str(mine)
    wait_estimate(qtbot, dialog, lambda plan: plan.provider == "scripted")
    start(dialog)
    branch = wait_branch(qtbot, window)
    assert Path(branch.path) == mine / "weather.fork3.loom.json"
    assert branch.findChild(BranchBar).where.text() == f"saved in {mine}"
    index = window.tabs.indexOf(branch)
    assert window.tabs.tabToolTip(index) == branch.path
