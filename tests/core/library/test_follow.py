"""A run the app has open is kept up to date wherever it is: one watched before it existed
is listed once written, one that keeps growing is read while it grows.

Why: a journal the user watched before its run began stayed "missing: the file is gone"
after it was written (nothing looked at it again until ``runs index FILE``), and a live
run written more often than the indexer's settle time was never read again while it ran
(its row kept its first steps). The files here are the bytes loom-harness writes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from loom_core.library.rows import RunRow
from loom_core.library.search import Library
from loom_core.library.worker import MAX_DEFER, LibraryIndexer
from loom_core.live.outcome import FINISHED
from tests.core.harness_runs import journal_complete

WAIT = 60.0


def _row(path: Path) -> RunRow | None:
    with Library() as lib:
        return lib.run(path)


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@contextmanager
def _worker(settle: float = 0.5) -> Iterator[LibraryIndexer]:
    worker = LibraryIndexer([], settle=settle)  # no folder watched: only what the app notes
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()


def test_a_journal_watched_before_it_exists_is_listed_once_written(tmp_path: Path) -> None:
    made, _run = journal_complete(tmp_path)
    later = tmp_path / "elsewhere" / "complete.jsonl"
    later.parent.mkdir()
    with _worker() as worker:
        worker.note(later, "opened")  # File ▸ Watch Journal… on a path nothing wrote yet
        assert worker.wait_idle(WAIT)
        row = _row(later)
        assert row is not None and (row.state, row.cause) == ("missing", "not written yet")
        later.write_bytes(made.read_bytes())  # the run starts and ends
        _until(lambda: (r := _row(later)) is not None and r.steps == 6, "listed once written")
    row = _row(later)
    assert row is not None and (row.state, row.outcome) == ("ok", FINISHED)


def test_a_run_written_faster_than_it_settles_is_read_while_it_grows(tmp_path: Path) -> None:
    made, _run = journal_complete(tmp_path)
    lines = made.read_bytes().splitlines(keepends=True)
    path = tmp_path / "elsewhere" / "live.jsonl"
    path.parent.mkdir()
    path.write_bytes(lines[0])  # the header: the app opens it as it starts
    done = threading.Event()

    def write() -> None:  # a line every 0.05 s, for far longer than MAX_DEFER
        rest = lines[1:]
        while not done.is_set():
            with path.open("ab") as fh:
                fh.write(rest[0] if rest else b"\n")
            rest = rest[1:]
            time.sleep(0.05)

    with _worker(settle=0.5) as worker:
        worker.note(path, "opened")
        assert worker.wait_idle(WAIT)
        writer = threading.Thread(target=write)
        writer.start()
        try:
            # read again while it still grows: it never pauses for the 0.5 s settle time
            _until(lambda: (r := _row(path)) is not None and r.steps > 0, "read while written")
            assert writer.is_alive()
        finally:
            done.set()
            writer.join(WAIT)
    assert MAX_DEFER < WAIT
