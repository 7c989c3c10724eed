"""A run's outcome in the library comes from its facts, tested on real runs of each kind.

Why real runs: the Runs page listed the demo's denied deploy as failed (a denial is an
error mark on its step) and a journal whose writer died mid-tool as running forever
(nothing re-read it). Each case here is made by the producer that makes it for users:
the offline demo (fake model, a real proxy process holding ``deploy*``, the agent with
the real SDK) and loom-harness 0.33.12's own agent loop and journal.
"""

from __future__ import annotations

import shutil
import signal
import sys
from pathlib import Path

import pytest

from loom_core.demo.headless import DemoResult, run_demo
from loom_core.library.index import Indexer
from loom_core.library.rows import RunRow
from loom_core.library.search import Library
from loom_core.live.outcome import FAILED, FINISHED, HUMAN, RUNNING, STOPPED
from loom_core.live.writers import NO_WRITER
from tests.core.harness_runs import (
    agent_inside_a_tool,
    budget_run,
    journal_complete,
    journal_crashed,
    journal_paused,
    max_steps_run,
)

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="writers are seen through /proc"
)


def _row(path: Path) -> RunRow:
    indexer = Indexer()
    try:
        assert indexer.index_file(path) == "indexed", indexer.cause(path)
    finally:
        indexer.close()
    with Library() as lib:
        row = lib.run(path)
    assert row is not None
    return row


class _Demos:
    """Each demo run made once and indexed on both backends: its outcome is the files'
    and the processes' facts, not the backend's (a run is about 3 s)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[str, tuple[Path, DemoResult]] = {}

    def run(self, how: str, kwargs: dict[str, object]) -> tuple[Path, DemoResult]:
        if how not in self.made:
            folder = self.root / how.replace(" ", "-")
            self.made[how] = folder, run_demo(folder, **kwargs)  # type: ignore[arg-type]
        return self.made[how]


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> _Demos:
    return _Demos(tmp_path_factory.mktemp("demos"))


@pytest.mark.xdist_group("demo_outcomes")  # both backends on the worker that made the run
@pytest.mark.parametrize(
    "how, kwargs, outcome",
    [
        ("approved", {"approve": True}, FINISHED),
        ("denied", {"approve": False}, FINISHED),  # the agent exited 0: a denial is no failure
        ("timed out", {"approve": None, "confirm_timeout": 1}, FINISHED),
        ("proxy killed", {"kill_when_held": True}, STOPPED),
    ],
)
def test_demo_runs_end_as_their_agent_did(
    tmp_path: Path, demos: _Demos, how: str, kwargs: dict[str, object], outcome: str
) -> None:
    made, result = demos.run(how, kwargs)
    assert result.held, result.report()
    assert (result.code == 0) == (outcome == FINISHED), result.report()
    shutil.copytree(made, tmp_path / "demo")  # a copy per backend: nothing shared is indexed
    row = _row(tmp_path / "demo" / "demo.loom.json")
    assert row.outcome == outcome, (how, row.why, result.report())
    if outcome == STOPPED:  # the proxy died while the agent waited for its call
        assert row.why == "its proxy is gone"


def test_harness_journals_finished_paused_and_crashed_mid_tool(tmp_path: Path) -> None:
    complete, _run = journal_complete(tmp_path)
    assert _row(complete).outcome == FINISHED
    assert _row(journal_paused(tmp_path)).outcome == HUMAN
    crashed = _row(journal_crashed(tmp_path))  # its writer died inside charge_card
    assert crashed.outcome == STOPPED
    assert crashed.why.startswith("crashed inside tool:charge_card (step 2)")


def test_harness_traces_stopped_by_a_limit_are_stopped_not_failed(tmp_path: Path) -> None:
    for recorded in (max_steps_run(tmp_path), budget_run(tmp_path)):
        row = _row(recorded.path)
        assert (row.outcome, row.why) == (STOPPED, f"stopped by its {recorded.name} limit")


@linux_only
def test_a_journal_whose_writer_is_killed_mid_tool_stops_running(tmp_path: Path) -> None:
    """Running while loom-harness is inside a tool; stopped once its process is killed,
    though the file never changes again (the library decides again, the reader too)."""
    path = tmp_path / "run.jsonl"
    with agent_inside_a_tool(path) as agent:
        assert _row(path).outcome == RUNNING  # its writer holds the journal open
        agent.send_signal(signal.SIGKILL)
        agent.wait(30)
    with Library() as lib:  # a reader decides again: `runs list` without the app
        row = lib.run(path)
    assert row is not None and row.outcome == STOPPED
    # in the words its live tab and `watch` use (it said "nobody writes it any more")
    assert row.why == f"crashed inside tool:wait_for_go (step 1); {NO_WRITER}"
    indexer = Indexer()
    try:
        assert indexer.recheck() == [str(path)]  # and the desktop's indexer stores it
        assert indexer.recheck() == []
    finally:
        indexer.close()


def test_an_error_the_app_saw_makes_the_run_failed(tmp_path: Path) -> None:
    """The demo's agent crashed: only its owner knows; the note survives re-indexing."""
    result = run_demo(tmp_path / "demo", kill_when_held=True)
    path = tmp_path / "demo" / "demo.loom.json"
    indexer = Indexer()
    try:
        indexer.note(path, "recorded", error="the demo's agent exited with status 1")
        indexer.note(path, "recorded")  # the proxy's own "recorded" comes after
    finally:
        indexer.close()
    with Library() as lib:
        row = lib.run(path)
    assert row is not None, result.report()
    assert (row.outcome, row.why) == (FAILED, "the demo's agent exited with status 1")
