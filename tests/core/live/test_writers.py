"""A journal whose writer is gone says "stopped without finishing"; nothing is guessed.

Why these cases: the status is a claim about a process, so each way of knowing is
pinned on its own -- the owner's word (the app's proxy or demo stopped), a look at
the machine's open files once the file is idle, and the case where nothing can be
known (the run keeps saying "running"; it is not declared dead on a hunch).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from loom_core.live.follow import JournalFollower
from loom_core.live.live_status import FAILED, FINISHED, RUNNING, STOPPED, WAITING
from loom_core.live.tail import JournalTailer
from loom_core.live.writers import PROBE_EVERY, writer_present
from tests.core.live_helpers import Mirror, effect, header, intent, model_result, wait_until

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="open files are listed through /proc"
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _running() -> bytes:
    """A run that asked for a tool: "running" while its writer lives."""
    return header("go") + effect(0, "model", model_result("go", ("tick",)))


@linux_only
def test_writer_present_sees_this_process_holding_the_file(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"")
    assert writer_present(path) is False
    with open(path, "ab"):
        assert writer_present(path) is True
    with open(path, "rb"):
        assert writer_present(path) is False  # readers are not writers (the tailer reads)
    assert writer_present(tmp_path / "missing.jsonl") is None


def test_the_owners_word_stops_a_run_at_once(tmp_path: Path) -> None:
    path, clock = tmp_path / "j.jsonl", Clock()
    path.write_bytes(_running())
    follower = JournalFollower(path, idle_after=10, clock=clock, probe=lambda _p: None)
    assert follower.read().status == RUNNING
    follower.note_writer_stopped("the proxy stopped (exit 0)")
    update = follower.read()
    assert update is not None and update.status == STOPPED
    assert update.detail == "the proxy stopped (exit 0)"
    with open(path, "ab") as fh:  # a writer is back: the note no longer holds
        fh.write(intent(1, "model"))
    assert follower.read().status == RUNNING


def test_the_owners_word_on_a_trailing_tool_intent_is_a_crash(tmp_path: Path) -> None:
    path, clock = tmp_path / "j.jsonl", Clock()
    path.write_bytes(_running() + intent(1, "tool:tick"))
    follower = JournalFollower(path, idle_after=10, clock=clock, probe=lambda _p: None)
    assert follower.read().status == RUNNING
    follower.note_writer_stopped("the proxy stopped (exit 0)")
    update = follower.read()
    assert update is not None and update.status == STOPPED
    assert update.detail == "crashed inside tool:tick (step 1); the proxy stopped (exit 0)"


def test_the_owners_word_of_an_error_makes_the_run_failed(tmp_path: Path) -> None:
    """The demo's agent crashed: an error ended the run, as the Runs page says too."""
    path, clock = tmp_path / "j.jsonl", Clock()
    path.write_bytes(_running())
    follower = JournalFollower(path, idle_after=10, clock=clock, probe=lambda _p: None)
    assert follower.read().status == RUNNING
    follower.note_writer_stopped("the demo's agent exited with status 1", failed=True)
    update = follower.read()
    assert update is not None and (update.status, update.detail) == (
        FAILED,
        "the demo's agent exited with status 1",
    )


def test_an_empty_journal_of_a_stopped_proxy_is_stopped_not_waiting(tmp_path: Path) -> None:
    path, clock = tmp_path / "j.jsonl", Clock()
    path.write_bytes(b"")
    follower = JournalFollower(path, idle_after=10, clock=clock, probe=lambda _p: False)
    assert follower.read().status == WAITING
    clock.now += 60
    assert follower.read() is None  # an empty file is waited for, never declared dead
    follower.note_writer_stopped("the proxy stopped")
    assert follower.read().status == STOPPED


def test_an_idle_run_without_a_writer_is_stopped_and_unknowable_stays_running(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(_running())
    for answer, after in ((False, STOPPED), (None, RUNNING), (True, RUNNING)):
        clock, looks = Clock(), []
        follower = JournalFollower(
            path,
            idle_after=10,
            clock=clock,
            probe=lambda p, a=answer, seen=looks: seen.append(p) or a,
        )
        assert follower.read().status == RUNNING and looks == []  # not idle: nobody looked
        clock.now += 10
        update = follower.read()
        assert (update.status if update else RUNNING) == after and len(looks) == 1
        if after == STOPPED:
            assert update.detail.startswith("no process on this machine")
        clock.now += PROBE_EVERY / 2
        follower.read()
        assert len(looks) == 1  # looked at most every PROBE_EVERY seconds


def test_a_finished_run_is_never_looked_at(tmp_path: Path) -> None:
    path, clock, looks = tmp_path / "j.jsonl", Clock(), []
    path.write_bytes(header("go") + effect(0, "model", model_result("done")))
    follower = JournalFollower(
        path, idle_after=1, clock=clock, probe=lambda p: looks.append(p) or False
    )
    assert follower.read().status == FINISHED
    clock.now += 100
    assert follower.read() is None and looks == []


_WRITER = """
import sys
with open(sys.argv[1], "ab") as fh:
    fh.write(sys.stdin.buffer.readline())
    fh.flush()
    sys.stdin.buffer.readline()  # hold the file open until told to exit
"""


@linux_only
def test_a_writer_process_that_exits_mid_run_is_stopped(tmp_path: Path) -> None:
    path, mirror = tmp_path / "j.jsonl", Mirror()
    lines = _running()
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdin=subprocess.PIPE)
    try:
        assert proc.stdin is not None
        proc.stdin.write(lines.split(b"\n", 1)[0] + b"\n")  # the header, from the child
        proc.stdin.flush()
        wait_until(lambda: path.exists() and path.stat().st_size > 0, "the header")
        with open(path, "ab") as fh:  # the rest from here: the child keeps it open
            fh.write(lines.split(b"\n", 1)[1])
        with JournalTailer(path, mirror, poll_interval=0.05, use_watchdog=False, idle_after=0.3):
            wait_until(lambda: len(mirror.entries) == 1, "the model effect")
            time.sleep(0.6)  # idle, but its writer still holds the file
            assert mirror.status == RUNNING
            proc.stdin.write(b"exit\n")
            proc.stdin.close()
            proc.wait(15)
            wait_until(
                lambda: mirror.status == STOPPED,
                "stopped without finishing",
                timeout=PROBE_EVERY + 10,
            )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(15)
    assert mirror.updates[-1].detail.startswith("no process on this machine")


def test_a_journal_opened_long_after_its_writer_died_is_stopped_at_once(tmp_path: Path) -> None:
    """The Runs page said "stopped without finishing" of loom-harness's crashed journal;
    its live tab said "running" for ten more seconds: it counted the quiet from opening."""
    import os

    from tests.core.harness_runs import journal_crashed

    path = journal_crashed(tmp_path)
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))
    follower = JournalFollower(path, idle_after=10, probe=lambda _p: None)  # writer unknowable
    update = follower.read()
    assert update is not None and update.status == STOPPED
    assert update.detail == "crashed inside tool:charge_card (step 2)"


@linux_only
def test_a_slow_tool_of_a_live_writer_is_running_until_its_process_dies(tmp_path: Path) -> None:
    """loom-harness inside a tool that takes long: its process holds the journal, so the
    tab says running (it said "crashed mid-tool" after ten quiet seconds, while the Runs
    page said running); once the process is killed, stopped without finishing."""
    import signal

    from tests.core.harness_runs import agent_inside_a_tool

    path, clock, seen = tmp_path / "run.jsonl", Clock(), []

    def probe(p: str) -> bool | None:
        seen.append(writer_present(p))
        return seen[-1]

    with agent_inside_a_tool(path) as agent:
        follower = JournalFollower(path, idle_after=10, clock=clock, probe=probe)
        first = follower.read()
        assert first is not None and first.status == RUNNING
        clock.now += 11  # quiet for longer than idle_after: the writer is looked for
        assert follower.tick() is None and seen == [True]  # still running: it is there
        agent.send_signal(signal.SIGKILL)
        agent.wait(30)
        clock.now += PROBE_EVERY  # the next look
        update = follower.tick()
    assert update is not None and update.status == STOPPED and seen[-1] is False
    assert update.detail.startswith("crashed inside tool:wait_for_go (step 1); no process")


def test_the_owners_word_that_it_writes_keeps_an_answered_run_running(tmp_path: Path) -> None:
    """The app's proxy records: its agent answered, but the next request may come; the
    tab says running (as the Runs page does) until the proxy stops, then finished."""
    path, clock = tmp_path / "j.jsonl", Clock()
    path.write_bytes(header("go") + effect(0, "model", model_result("done")))
    follower = JournalFollower(path, idle_after=10, clock=clock, probe=lambda _p: None)
    follower.note_writer_running()
    update = follower.read()
    assert update is not None and update.status == RUNNING
    follower.note_writer_stopped("the proxy that wrote it stopped (exit status 0)")
    update = follower.read()
    assert update is not None and update.status == FINISHED
