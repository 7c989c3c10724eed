"""The re-read follower: a foreign file is re-read whole when it changes, debounced,
keeps its last good read on a failed re-read, and turns idle when nobody writes it."""

from __future__ import annotations

import os
import time
from pathlib import Path

from loom_core.live.live_status import RUNNING, WAITING
from loom_core.live.reread import IDLE, MIN_GAP, RereadFollower, RereadUpdate, is_live_file
from loom_core.live.tail import JournalTailer
from tests.core.foreign_toy import READER, toy_line


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def _follower(path: Path, clock: Clock, present: bool | None = None) -> RereadFollower:
    return RereadFollower(path, READER, idle_after=10.0, clock=clock, probe=lambda _p: present)


def test_rereads_on_change_only_and_debounces(tmp_path: Path) -> None:
    path, clock = tmp_path / "run.toy", Clock()
    follower = _follower(path, clock)
    first = follower.read()
    assert first is None or (first.document is None and first.status == WAITING)
    path.write_bytes(toy_line("a") + toy_line("b"))
    update = follower.read()
    assert isinstance(update, RereadUpdate) and update.document is not None
    assert len(update.document.effects) == 2 and update.status == RUNNING
    assert follower.read() is None  # nothing changed: no re-read, no update
    _append(path, toy_line("c", 7))
    assert follower.read() is None  # within the gap after the last read: waits…
    assert 0 < (follower.due_in() or 0) <= MIN_GAP + 1e-6  # …and says when to come back
    clock.now += MIN_GAP
    update = follower.read()
    assert update is not None and update.document is not None
    assert len(update.new_effects) == 1 and update.total_effects == 3
    assert update.document.result(2)["usage"]["input_tokens"] == 7


def test_torn_line_then_completed(tmp_path: Path) -> None:
    path, clock = tmp_path / "run.toy", Clock()
    path.write_bytes(toy_line("a"))
    follower = _follower(path, clock)
    assert follower.read() is not None
    line = toy_line("b")
    _append(path, line[:5])
    clock.now += 1
    update = follower.read()
    assert update is not None and update.total_effects == 1  # the torn half is not a step
    _append(path, line[5:])
    clock.now += 1
    update = follower.read()
    assert update is not None and update.total_effects == 2


def test_failed_reread_keeps_the_last_good_read(tmp_path: Path) -> None:
    path, clock = tmp_path / "run.toy", Clock()
    path.write_bytes(toy_line("a"))
    follower = _follower(path, clock)
    follower.read()
    _append(path, b"not toy\n")
    clock.now += 1
    update = follower.read()
    assert update is not None and update.error is None and update.document is None
    assert "line 2 is not a toy record" in update.problems[0]
    assert follower.document is not None and len(follower.document.effects) == 1


def test_first_read_failure_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "run.toy"
    path.write_bytes(b'{"toy": 1}\n{"nope": 2}\n')
    update = _follower(path, Clock()).read()
    assert update is not None and update.error and "line 2" in update.error


def test_idle_when_quiet_and_no_writer_running_while_held(tmp_path: Path) -> None:
    path, clock = tmp_path / "run.toy", Clock()
    path.write_bytes(toy_line("a"))
    follower = _follower(path, clock, present=False)
    assert follower.read().status == RUNNING  # type: ignore[union-attr]
    clock.now += 11
    update = follower.tick()
    assert update is not None and update.status == IDLE and "open for writing" in update.detail
    held = _follower(path, clock, present=True)
    held.read()
    clock.now += 11
    assert held.tick() is None  # still running: a process holds it open for writing
    assert held._status == RUNNING


def test_a_file_last_written_long_ago_is_idle_from_the_first_read(tmp_path: Path) -> None:
    """A tab that follows a session nobody wrote for an hour says idle at once, not running
    for the first seconds as if the read were a write."""
    path, clock = tmp_path / "run.toy", Clock()
    path.write_bytes(toy_line("a"))
    old = path.stat().st_mtime - 3600
    os.utime(path, (old, old))
    update = _follower(path, clock, present=False).read()
    assert update is not None and update.document is not None and update.status == IDLE
    fresh = tmp_path / "fresh.toy"
    fresh.write_bytes(toy_line("a"))
    assert _follower(fresh, clock).read().status == RUNNING  # type: ignore[union-attr]


def test_is_live_file(tmp_path: Path) -> None:
    path = tmp_path / "run.toy"
    path.write_bytes(toy_line("a"))
    assert is_live_file(path, probe=lambda _p: None)
    old = path.stat().st_mtime - 3600
    os.utime(path, (old, old))
    assert not is_live_file(path, probe=lambda _p: False)
    assert is_live_file(path, probe=lambda _p: True)
    assert not is_live_file(tmp_path / "missing.toy")


def test_tailer_thread_drives_the_follower(tmp_path: Path) -> None:
    path = tmp_path / "run.toy"
    path.write_bytes(toy_line("a"))
    seen: list[RereadUpdate] = []
    follower = RereadFollower(path, READER)
    with JournalTailer(path, seen.append, poll_interval=0.05, follower=follower) as tailer:
        for i in range(200):  # bounded: 10 s at most
            if any(u.total_effects == 3 for u in seen):
                break
            if i == 2:
                _append(path, toy_line("b") + toy_line("c"))
            tailer.hint()
            time.sleep(0.05)
    assert any(u.total_effects == 3 for u in seen)


def test_a_companion_file_changing_is_a_change(tmp_path: Path) -> None:
    import dataclasses

    path, side, clock = tmp_path / "run.toy", tmp_path / "side.txt", Clock()
    path.write_bytes(toy_line("a"))
    side.write_text("1")
    reader = dataclasses.replace(READER, companions=lambda _p: [str(side)])
    follower = RereadFollower(path, reader, clock=clock, probe=lambda _p: None)
    assert follower.read() is not None
    clock.now += 1
    assert follower.read() is None  # nothing changed
    side.write_text("12")
    update = follower.read()
    assert update is not None and update.document is not None  # re-read for the companion
