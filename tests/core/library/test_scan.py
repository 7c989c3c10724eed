"""Which files in a folder are runs: whatever a reader claims from its first bytes, named as
its producer names it; a Claude Code sub-agent's own file never is.

Why real files: five loom-harness journals named ``run.jsonl`` / ``live.jsonl`` (as its
docs name them) were not listed though each opens by content, and a real Claude Code
session's sub-agent file was listed as a run of its own when its ``subagents`` folder
appeared after the session (the folder was scanned alone).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from loom_core.library.index import Indexer
from loom_core.library.scan import is_run_file, run_files
from loom_core.library.search import Library
from loom_core.library.worker import LibraryIndexer
from tests.core.formats.real_world import real_file
from tests.core.harness_runs import journal_complete, journal_crashed, journal_paused
from tests.core.library.conftest import make_recording

SESSION = "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569"


def test_loom_journals_are_runs_whatever_their_name(tmp_path: Path) -> None:
    made = tmp_path / "made"
    made.mkdir()
    folder = tmp_path / "runs"
    folder.mkdir()
    complete, _run = journal_complete(made)
    sources = {
        "run.jsonl": complete,
        "live.jsonl": journal_paused(made),
        "crashed.jsonl": journal_crashed(made),
    }
    for name, source in sources.items():
        shutil.copy(source, folder / name)
    recording = make_recording(made / "proxy")  # its journal and sidecar, renamed
    shutil.copy(recording.with_name("session.journal.jsonl"), folder / "proxy-run.jsonl")
    shutil.copy(recording.with_name("session.exchanges.jsonl"), folder / "exchanges.jsonl")
    shutil.copy(recording, folder / "saved-trace.json")  # a trace, not named .loom.json
    (folder / "package.json").write_text('{"version": "1.0.0", "name": "not-a-run"}')
    (folder / "notes.jsonl").write_text('{"type": "note"}\n')
    expected = ["crashed.jsonl", "live.jsonl", "proxy-run.jsonl", "run.jsonl", "saved-trace.json"]
    assert sorted(Path(p).name for p in run_files(folder)) == expected
    indexer = Indexer()
    try:
        report = indexer.index_folder(folder)
    finally:
        indexer.close()
    assert sorted(Path(p).name for p in report.indexed) == expected and not report.unreadable
    with Library() as lib:
        formats = {Path(r.path).name: r.format for r in lib.runs()}
    assert formats == {**dict.fromkeys(expected, "journal"), "saved-trace.json": "trace"}


def _session_in(projects: Path, with_subagents: bool) -> Path:
    """The real session (and, if asked, its sub-agent files) in a Claude Code project."""
    project = projects / "-home-user-spotter"
    project.mkdir(parents=True, exist_ok=True)
    session = project / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    shutil.copy(real_file("claude-code", f"{SESSION}.jsonl"), session)
    if with_subagents:
        source = real_file("claude-code", SESSION, "subagents", "agent-a2898e3.jsonl").parent
        shutil.copytree(source, session.with_suffix("") / "subagents")
    return session


def test_a_sub_agent_file_is_never_a_run_of_its_own(tmp_path: Path) -> None:
    session = _session_in(tmp_path / "projects", with_subagents=True)
    subagents = session.with_suffix("") / "subagents"
    agent = subagents / "agent-a2898e3.jsonl"
    assert not is_run_file(str(agent))  # seen alone, as a watcher sees a new folder
    assert run_files(subagents) == []
    assert run_files(tmp_path / "projects") == [str(session)]


def test_a_sub_agent_folder_that_appears_later_joins_its_session(tmp_path: Path) -> None:
    """Claude Code writes a session, then its sub-agent's file in a new folder: the watcher
    sees the folder and the file; the session is read again, no second run appears."""
    projects = tmp_path / "projects"
    session = _session_in(projects, with_subagents=False)
    worker = LibraryIndexer([projects], settle=0.05)
    worker.start()
    try:
        assert worker.wait_idle(60)
        with Library() as lib:
            before = lib.run(session)
        assert before is not None and before.state == "ok"
        source = real_file("claude-code", SESSION, "subagents", "agent-a2898e3.jsonl").parent
        shutil.copytree(source, session.with_suffix("") / "subagents")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with Library() as lib:
                now = lib.run(session)
                paths = [r.path for r in lib.runs()]
            if now is not None and now.steps > before.steps:
                break
            time.sleep(0.05)
        assert worker.wait_idle(60)
    finally:
        worker.stop()
    assert now is not None and now.steps > before.steps  # the sub-agent's steps joined it
    assert paths == [str(session)]
