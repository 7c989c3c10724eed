"""The live tab follows real loom-harness runs: in flight, paused then resumed, crashed then recovered."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from loom import Run

from loom_core.formats.loader import load
from loom_core.live.live_status import FINISHED, HUMAN, RUNNING, STOPPED
from loom_core.views.timeline import F_UNFINISHED, build_timeline
from loom_desktop.main_window import MainWindow
from tests.core.harness_runs import Crash, crashing_agent, paused_journal_agent
from tests.core.live.test_tail import gated_agent


def _shows_file(view, path: Path) -> bool:
    live = view.live
    if live.builder is None or live.builder.walker.done < len(live.doc.effects):
        return False
    expected = build_timeline(load(path))
    return view.model.rowCount() == len(expected) and list(view.session.timeline.kind) == list(
        expected.kind
    )


def _wait(qtbot, view, path: Path, status: str) -> None:
    """Wait for ``status`` and the file's content; on a timeout, say what the tab showed."""
    try:
        qtbot.waitUntil(
            lambda: view.live.status == status and _shows_file(view, path), timeout=15_000
        )
    except Exception:
        expected = build_timeline(load(path))
        raise AssertionError(
            f"wanted {status}: status={view.live.status} rows={view.model.rowCount()} "
            f"expected={len(expected)} kinds={list(view.session.timeline.kind)} "
            f"vs {list(expected.kind)} updates={view.live.updates}"
        ) from None


def _watch(window: MainWindow, path: Path, idle_after: float | None = None):
    view = window.open_path(str(path))
    view.live.tailer.poll_interval = 0.1
    if idle_after is not None:
        view.live.tailer._follower.idle_after = idle_after
    return view


def test_run_in_flight_then_finished(qtbot, window: MainWindow, tmp_path: Path) -> None:
    path = tmp_path / "deploy.jsonl"
    view = _watch(window, path)
    gate = threading.Event()
    out: list[Run] = []
    agent = gated_agent(path, gate)
    thread = threading.Thread(target=lambda: out.append(agent.run("Deploy to eu")), daemon=True)
    thread.start()
    try:
        qtbot.waitUntil(
            lambda: (
                view.live.status == RUNNING
                and bool(view.live.unfinished)
                and _shows_file(view, path)
            ),
            timeout=15_000,
        )
    finally:
        gate.set()
        thread.join(15)
    assert out and out[0].output == "Deployed."
    _wait(qtbot, view, path, FINISHED)


def test_paused_then_resumed(qtbot, window: MainWindow, tmp_path: Path) -> None:
    path = tmp_path / "paused.jsonl"
    view = _watch(window, path)
    paused = paused_journal_agent(path).run("Go somewhere")
    assert paused.paused
    _wait(qtbot, view, path, HUMAN)
    window.update_status()
    assert view.live.bar.status.text() == HUMAN
    resumed = paused.resume("yes")  # rewrites the journal from the start
    assert resumed.output == "went"
    _wait(qtbot, view, path, FINISHED)
    assert view.live.rewrites == 1 and "rewritten 1×" in view.live.bar.rewrites.text()


def test_crashed_then_recovered(qtbot, window: MainWindow, tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    view = _watch(window, path, idle_after=0.3)
    with pytest.raises(Crash):
        crashing_agent(path).run("Bill the customer")
    _wait(qtbot, view, path, STOPPED)
    last = view.session.count - 1
    assert view.session.timeline.flags[last] & F_UNFINISHED
    run = Run.recover(str(path), crashing_agent(path, crash=False, skip=1), on_unfinished="retry")
    assert run.output == "charged"
    _wait(qtbot, view, path, FINISHED)
