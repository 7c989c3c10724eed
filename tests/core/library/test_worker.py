"""The desktop's library worker: indexes watched folders off the caller's thread, follows
changes, reports progress, cancels, and leaves no thread behind.

Why real threads and a real watcher: the contract is that the caller never waits (every
request returns at once) and that the worker and watchdog's observer both stop when
their owner says so. Waits are bounded (``wait_idle`` with a timeout).
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from loom_core.library.scan import default_folders
from loom_core.library.search import Library
from loom_core.library.watch import FolderWatcher
from loom_core.library.worker import IndexProgress, LibraryIndexer
from tests.core.library.conftest import SAMPLE, sqlite_only


def _threads() -> set[threading.Thread]:
    return set(threading.enumerate())


def test_scans_follows_changes_and_stops(runs: Path) -> None:
    before = _threads()
    progress: list[IndexProgress] = []
    changed: list[list[str]] = []
    scanned_on: set[str] = set()

    def on_progress(p: IndexProgress) -> None:
        progress.append(p)
        scanned_on.add(threading.current_thread().name)

    worker = LibraryIndexer([runs], on_progress=on_progress, on_changed=changed.append, settle=0.05)
    worker.start()
    try:
        assert worker.wait_idle(30)
        assert scanned_on == {"library-indexer"}  # the first scan ran on the worker, not here
        lib = Library()
        assert len(lib.runs()) == 3
        assert any(p.phase == "scanning" and p.total == 3 for p in progress)
        assert progress[-1].phase == "idle" and changed
        new = runs / "later" / "copy.loom.json"
        new.parent.mkdir()
        shutil.copy(SAMPLE, new)
        deadline = time.monotonic() + 20

        def state() -> str:
            row = lib.run(new)
            return row.state if row is not None else ""

        # the watcher's hints: the new folder, then the file as it is written (it may be
        # read half-written first, and is read again once it settles)
        while state() != "ok" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state() == "ok"
        new.unlink()
        while state() != "missing" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state() == "missing"
        worker.note(runs / "sample.loom.json", "opened")
        assert worker.wait_idle(20)
        assert lib.run(runs / "sample.loom.json").source == "opened"  # type: ignore[union-attr]
        worker.forget(runs / "sample.loom.json")
        assert worker.wait_idle(20) and lib.run(runs / "sample.loom.json") is None
        assert (runs / "sample.loom.json").exists()
        lib.close()
    finally:
        worker.stop()
    assert not {t for t in _threads() - before if t.is_alive()}


def test_cancel_stops_a_scan_between_files(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(40):
        shutil.copy(SAMPLE, folder / f"run-{n}.loom.json")
    gate = threading.Event()
    seen: list[IndexProgress] = []

    def on_progress(p: IndexProgress) -> None:
        seen.append(p)
        if p.phase == "scanning" and p.done == 2:
            gate.set()
            time.sleep(0.2)  # the caller cancels while the worker is inside the scan

    worker = LibraryIndexer([folder], on_progress=on_progress, watch=False)
    worker.start()
    try:
        assert gate.wait(30)
        worker.cancel()
        assert worker.wait_idle(30)
        with Library() as lib:
            assert 2 <= lib.count() < 40
        worker.refresh()  # asked again: the rest is indexed
        assert worker.wait_idle(60)
        with Library() as lib:
            assert lib.count() == 40
    finally:
        worker.stop()


def test_an_unknown_event_is_refused_at_once(tmp_path: Path) -> None:
    worker = LibraryIndexer([], watch=False)
    try:
        worker.note(tmp_path / "x.loom.json", "opened")
        try:
            worker.note(tmp_path / "x.loom.json", "deleted")
        except ValueError as err:
            assert "events are opened" in str(err)
        else:
            raise AssertionError("no ValueError")
    finally:
        worker.stop()  # never started: stopping is still fine


def test_default_folders_are_the_runs_folder_and_claude_projects(
    tmp_path: Path, runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    assert default_folders() == []  # neither exists yet
    runs_dir.mkdir()
    (tmp_path / "claude" / "projects").mkdir(parents=True)
    assert default_folders() == [runs_dir, tmp_path / "claude" / "projects"]


def test_big_runs_are_indexed_by_a_child_process(runs: Path, tmp_path: Path) -> None:
    """The app's process never loads a big run a second time to index it: a child does."""
    import sys

    calls: list[tuple[str, str]] = []

    def spawn(db: str, path: str) -> list[str]:
        calls.append((db, path))
        return [sys.executable, "-m", "loom_core", "runs", "--library", db, "index", path]

    big = runs / "sample.loom.json"
    small = runs / "small.loom.json"
    small.write_text('{"version": 2, "log": []}')
    worker = LibraryIndexer([], watch=False, spawn=spawn, offload_bytes=big.stat().st_size)
    worker.start()
    try:
        worker.note(big, "opened")
        worker.note(small, "opened")
        assert worker.wait_idle(60)
        with Library() as lib:
            row = lib.run(big)
            assert row is not None and row.state == "ok" and row.steps == 28
            assert lib.run(small) is not None
        assert [Path(p).name for _db, p in calls] == ["sample.loom.json"]  # the small one here
        assert worker.offload is not None and worker.offload.children == 1
    finally:
        worker.stop()


def test_the_folder_watcher_starts_on_the_indexers_thread(tmp_path: Path, backend: str) -> None:
    """Its import and its thread's start are not the caller's (the window's GUI thread)."""
    sqlite_only(backend)  # nothing here is the database's
    threads: list[int] = []
    plain = FolderWatcher.start

    def recorded(watcher: FolderWatcher) -> bool:
        threads.append(threading.get_ident())
        return plain(watcher)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FolderWatcher, "start", recorded)
        worker = LibraryIndexer([tmp_path])
        worker.start()
        deadline = time.monotonic() + 20
        while not threads and time.monotonic() < deadline:
            time.sleep(0.01)
        worker.stop()
    assert threads and threads[0] != threading.get_ident()
