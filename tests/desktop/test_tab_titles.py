"""Tabs of files with the same name show their folder, like editors; the tooltip is the path."""

from __future__ import annotations

import shutil
from pathlib import Path

from loom_desktop.main_window import MainWindow
from loom_desktop.tab_titles import distinct_names


def test_distinct_names_add_the_shortest_differing_folder_tail() -> None:
    assert distinct_names(["/x/a/run.json", "/x/b/run.json", "/y/c.json"]) == [
        "run.json · a",
        "run.json · b",
        "c.json",
    ]
    assert distinct_names(["/x/a/run.json", "/y/a/run.json"]) == [
        "run.json · x/a",
        "run.json · y/a",
    ]
    assert distinct_names(["/x/a/run.json", "/x/a/run.json"]) == ["run.json", "run.json (2)"]


def test_same_named_tabs_can_be_told_apart(
    qtbot, open_and_wait, window: MainWindow, sample: Path, tmp_path: Path
) -> None:
    paths = []
    for folder in ("monday", "tuesday"):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "run.loom.json")
        shutil.copy(sample, paths[-1])
    first = open_and_wait(window, paths[0])
    assert window.tabs.tabText(0) == "run.loom.json"  # alone: just the name
    second = open_and_wait(window, paths[1])
    tabs = window.tabs
    assert [tabs.tabText(i) for i in range(2)] == [
        "run.loom.json · monday",
        "run.loom.json · tuesday",
    ]
    assert [tabs.tabToolTip(i) for i in range(2)] == [str(p) for p in paths]
    window.close_tab(tabs.indexOf(first))
    assert tabs.tabText(tabs.indexOf(second)) == "run.loom.json"


def test_window_title_names_the_current_tab_and_no_tab_says_how_to_open(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    assert (
        window.central.currentWidget() is window.library.start_page
        and "Ctrl+O" in window.empty.text()
    )
    assert window.windowTitle() == "Loom Desktop"
    view = open_and_wait(window, sample)
    assert window.windowTitle() == "sample.loom.json — Loom Desktop"
    assert window.central.currentWidget() is window.tabs
    window.close_tab(window.tabs.indexOf(view))
    assert (
        window.windowTitle() == "Loom Desktop"
        and window.central.currentWidget() is window.library.start_page
    )


def test_window_title_follows_a_renamed_tab(
    qtbot, open_and_wait, window: MainWindow, sample: Path
) -> None:
    view = open_and_wait(window, sample)
    window.tabs.setTabText(
        window.tabs.indexOf(view), "● branch of sample at step 14"
    )  # as a fork does
    assert window.windowTitle() == "● branch of sample at step 14 — Loom Desktop"


def test_a_file_named_by_an_id_is_titled_by_its_run() -> None:
    from types import SimpleNamespace

    from loom_desktop.tab_titles import run_title

    def doc(fmt: str, *episodes: str) -> SimpleNamespace:
        return SimpleNamespace(format=fmt, episodes=list(episodes))

    session = "/p/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
    assert run_title(session, doc("claude-code", "mix phx.server  doesnt\nstart")) == (
        "Claude Code: mix phx.server doesnt start"
    )
    long = "Find out why the nightly build fails on the ARM runners and fix it"
    assert run_title(session, doc("claude-code", long)) == f"Claude Code: {long[:31]}…"
    slash = (
        "<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init"
    )
    assert (
        run_title(session, doc("claude-code", slash))
        == "Claude Code: init is analyzing your codebase…"
    )
    trace = "/r/4bf92f3577b34da6a3ce929d0e0e4736-2.otlp.jsonl"
    assert run_title(trace, doc("otlp", "yous")) == "OTel: yous"
    assert run_title(trace, doc("otlp")) == "OTel 4bf92f35…"
    assert run_title("/r/agent.otlp.jsonl", doc("otlp", "yous")) is None  # named in words


def test_a_session_tab_says_its_prompt_and_an_ended_run_loses_its_live_dot(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    from tests.core.formats.claude_fixtures import full_session
    from tests.core.harness_runs import journal_complete

    path, _main, _sub = full_session(tmp_path / "projects")
    session = window.open_path(str(path), watch=True)
    qtbot.waitUntil(lambda: session.doc is not None, timeout=20_000)
    index = window.tabs.indexOf(session)
    qtbot.waitUntil(lambda: "Claude Code: " in window.tabs.tabText(index), timeout=20_000)
    assert path.stem not in window.tabs.tabText(index)  # not the session's UUID
    assert window.tabs.tabToolTip(index) == str(path)
    journal, _run = journal_complete(tmp_path)
    view = window.open_path(str(journal))  # a finished run's journal: a live tab at first
    assert view.live is not None
    qtbot.waitUntil(lambda: view.live.status == "finished", timeout=20_000)
    qtbot.waitUntil(
        lambda: window.tabs.tabText(window.tabs.indexOf(view)) == journal.name, timeout=20_000
    )
    assert not window.tabs.tabText(window.tabs.indexOf(view)).startswith("●")
    for v in (session, view):
        if v.live is not None:
            v.live.stop()
