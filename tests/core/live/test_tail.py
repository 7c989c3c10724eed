"""Following a journal while it is written: the tailer, its updates and the live status.

Why: a live tab must show exactly what a full reload would show, at every moment a
run can be in -- mid-line, rewritten by ``resume``/``recover``, deleted and
re-created, paused on a human, dead inside a tool -- and never report a rewrite
that did not happen. The synchronous tests pin each rule with ``poll_now``; the
threaded ones run a writer thread (and real loom-harness agents) against the
tailer with watchdog events and with polling only, and compare the stream of
updates, applied like the desktop applies them, with ``loom_core.formats.loader.load``.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loom import Agent, Run, tool
from loom.providers.base import ModelResponse, ToolCall
from loom.providers.scripted import ScriptedProvider

from loom_core.formats.journal import parse_journal_lines
from loom_core.formats.loader import load
from loom_core.live.follow import JournalFollower
from loom_core.live.live_status import (
    FINISHED,
    HUMAN,
    REWRITTEN,
    RUNNING,
    STOPPED,
    WAITING,
    live_outcome,
    live_status,
)
from loom_core.live.tail import JournalTailer
from tests.core.harness_runs import Crash, crashing_agent, paused_journal_agent
from tests.core.live_helpers import (
    Mirror,
    WriterThread,
    effect,
    header,
    intent,
    model_result,
    tool_pairs,
    wait_until,
)


def state_of(*lines: bytes) -> Any:
    return parse_journal_lines(b"".join(lines).split(b"\n"))


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


# -- live_status ---------------------------------------------------------------


def test_status_rules() -> None:
    head = header("one", "two")
    asked = effect(0, "model", model_result("", ("read",)))
    answered = [effect(2, "model", model_result("first")), effect(3, "model", model_result("2nd"))]
    assert live_status(None, 0) == WAITING
    assert live_status(state_of(), 0) == WAITING
    assert live_status(state_of(head), 0) == RUNNING
    assert live_outcome(state_of(head), 0, rewritten=True) == (REWRITTEN, "")
    assert live_status(state_of(head, asked, intent(1, "human")), 99) == HUMAN
    tool_in_flight = state_of(head, asked, intent(1, "tool:read"))
    assert live_status(tool_in_flight, 1.0, idle_after=5) == RUNNING
    assert live_status(tool_in_flight, 5.0, idle_after=5) == STOPPED
    assert live_status(state_of(head, asked, intent(1, "model")), 99) == RUNNING
    one_answer = state_of(head, asked, effect(1, "tool:read", "x"), answered[0])
    assert live_status(one_answer, 99) == RUNNING  # the second episode is not answered yet
    assert live_status(state_of(head, asked, effect(1, "tool:read", "x"), *answered), 0) == FINISHED
    still_acting = state_of(head, *answered, effect(4, "model", model_result("", ("read",))))
    assert live_status(still_acting, 99) == RUNNING  # e.g. stopped by max_steps
    child_answer = effect(1, "model", model_result("child done"), depth=1)
    assert live_status(state_of(header("x"), asked, child_answer), 99) == RUNNING


def test_status_counts_incrementally_on_a_growing_state() -> None:
    state = state_of(header("a", "b"), effect(0, "model", model_result("A")))
    assert live_status(state, 0) == RUNNING
    parse_journal_lines([effect(1, "model", model_result("B"))], state)
    assert live_status(state, 0) == FINISHED
    parse_journal_lines([effect(2, "model", model_result("", ("t",)))], state)
    assert live_status(state, 0) == RUNNING


# -- synchronous following -----------------------------------------------------


def test_complete_lines_only_and_a_torn_line_is_picked_up(tmp_path: Path) -> None:
    path, mirror = tmp_path / "j.jsonl", Mirror()
    tailer = JournalTailer(path, mirror)
    first = tailer.poll_now()
    assert first is not None and (first.exists, first.status) == (False, WAITING)
    assert tailer.poll_now() is None  # nothing changed: no update
    line = effect(0, "tool:read", "contents")
    path.write_bytes(header("go") + intent(0, "tool:read") + line[:20])
    update = tailer.poll_now()
    assert update is not None and update.torn and update.exists
    assert (update.new_effects, mirror.unfinished) == ([], [(0, "tool:read", 0)])
    assert update.offset == len(header("go") + intent(0, "tool:read"))
    append(path, line[20:])
    update = tailer.poll_now()
    assert update is not None and not update.torn and not update.rewritten
    assert update.unreadable == ()  # a line completed later was never unreadable
    assert [e.kind for e in update.new_effects] == ["tool:read"] and mirror.matches(path)
    assert update.offset == path.stat().st_size and mirror.problems == []


def test_a_burst_is_one_update(tmp_path: Path) -> None:
    path, mirror = tmp_path / "burst.jsonl", Mirror()
    tailer = JournalTailer(path, mirror)
    path.write_bytes(header("go"))
    tailer.poll_now()
    append(path, b"".join(tool_pairs(0, 5000)))  # 10,000 lines
    update = tailer.poll_now()
    assert update is not None and len(update.new_effects) == len(update.new_entries) == 5000
    assert len(mirror.updates) == 2 and mirror.matches(path)


def test_truncate_and_rewrite_is_reported_even_when_longer(tmp_path: Path) -> None:
    """What ``resume`` does: same header, the trailing intent becomes an effect, more follows."""
    path, mirror = tmp_path / "r.jsonl", Mirror()
    tailer = JournalTailer(path, mirror)
    asked = effect(0, "model", model_result("", ("ask_human",)))
    path.write_bytes(header("go") + intent(0, "model") + asked + intent(1, "human"))
    assert tailer.poll_now() is not None and mirror.status == HUMAN
    with open(path, "wb") as f:  # truncate + rewrite in place, as loom-harness does
        f.write(
            header("go")
            + asked
            + effect(1, "human", "yes")
            + intent(2, "model")
            + effect(2, "model", model_result("went"))
        )
    update = tailer.poll_now()
    assert update is not None and update.rewritten and update.status == REWRITTEN
    assert len(update.new_effects) == 3 and mirror.matches(path)
    follow_up = tailer.poll_now()  # "rewritten" is transient
    assert follow_up is not None and follow_up.status == FINISHED and not follow_up.rewritten
    append(path, b"\n")
    blank = tailer.poll_now()  # an appended blank line moves the offset, and is no rewrite
    assert blank is not None and not blank.rewritten and blank.new_effects == []
    assert tailer.poll_now() is None


def test_truncated_to_empty_then_rewritten(tmp_path: Path) -> None:
    path, mirror = tmp_path / "t.jsonl", Mirror()
    tailer = JournalTailer(path, mirror)
    path.write_bytes(header("old") + b"".join(tool_pairs(0, 3)))
    tailer.poll_now()
    path.write_bytes(b"")
    update = tailer.poll_now()
    assert update is not None and update.rewritten and update.header is None
    path.write_bytes(header("new") + b"".join(tool_pairs(0, 1)))
    update = tailer.poll_now()
    assert update is not None and not update.rewritten and mirror.matches(path)
    assert mirror.rewrites == 1


@pytest.mark.parametrize("seen_missing", [True, False])
def test_delete_and_recreate(tmp_path: Path, seen_missing: bool) -> None:
    path, mirror = tmp_path / "d.jsonl", Mirror()
    tailer = JournalTailer(path, mirror)
    path.write_bytes(header("first") + b"".join(tool_pairs(0, 4)))
    tailer.poll_now()
    path.unlink()
    if seen_missing:
        gone = tailer.poll_now()
        assert gone is not None and not gone.exists and gone.status == WAITING
        assert len(mirror.entries) == 4  # kept until something replaces it
    path.write_bytes(header("second") + b"".join(tool_pairs(0, 9)))
    update = tailer.poll_now()
    assert update is not None and update.rewritten and update.exists
    assert len(update.new_effects) == 9 and mirror.matches(path) and mirror.rewrites == 1


def test_a_bad_line_is_named_and_the_lines_after_it_are_followed(tmp_path: Path) -> None:
    """A full load stops at it, as loom-harness does; the live tail says which line it
    was and goes on (a run that keeps writing must not look frozen)."""
    path, mirror = tmp_path / "g.jsonl", Mirror()
    tailer = JournalTailer(path, mirror)
    path.write_bytes(header("go") + b"".join(tool_pairs(0, 2)) + b"<<junk>>\n")
    update = tailer.poll_now()
    assert update is not None and not update.torn and update.error is None
    assert [(n, cause.split(" (")[0]) for n, cause in update.unreadable] == [(6, "not valid JSON")]
    append(path, b"".join(tool_pairs(2, 2)))
    update = tailer.poll_now()
    assert update is not None and update.unreadable == () and len(update.new_effects) == 2
    assert load(path).torn and len(mirror.entries) == 4 and not mirror.problems


BAD_LINES = {
    "invalid UTF-8": (effect(1, "tool:x", "ok").replace(b'"ok"', b'"\xff\xfe"'), "not UTF-8 text"),
    "deep nesting": (
        effect(1, "tool:x", "ok").replace(b'"ok"', b"[" * 1000 + b"]" * 1000),
        "nested too deeply",
    ),
    "wrong header types": (
        b'{"type": "header", "version": "x"}\n',
        "wrong type in header member 'version'",
    ),
}


@pytest.mark.parametrize("name", BAD_LINES)
def test_an_unreadable_line_is_reported_with_its_number_and_skipped(
    tmp_path: Path, name: str
) -> None:
    bad, cause = BAD_LINES[name]
    path, mirror = tmp_path / "u.jsonl", Mirror()
    tailer = JournalTailer(path, mirror)
    path.write_bytes(header("go") + effect(0, "model", model_result("go", ("x",))))
    assert tailer.poll_now() is not None and len(mirror.entries) == 1
    append(path, bad + effect(2, "model", model_result("done")))
    update = tailer.poll_now()
    assert update is not None and update.error is None
    assert len(update.unreadable) == 1 and update.unreadable[0][0] == 3
    assert update.unreadable[0][1].startswith(cause)
    assert [e.seq for e in update.new_effects] == [2] and update.status == FINISHED
    assert mirror.header is not None and mirror.header["episodes"] == ["go"]  # kept
    assert tailer.poll_now() is None  # reported once


def test_a_first_line_with_wrong_types_is_reported_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(
        b'{"type": "header", "version": "x"}\n' + effect(0, "model", model_result("a"))
    )
    update = JournalTailer(path, Mirror()).poll_now()
    assert update is not None and update.error is None and update.header is None
    assert update.unreadable[0][0] == 1 and "header member 'version'" in update.unreadable[0][1]
    assert len(update.new_effects) == 1


def test_fields_of_the_wrong_type_are_read_as_defaults_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    path.write_bytes(header("go") + b'{"type": "effect", "seq": 1, "kind": 5, "key": "k"}\n')
    update = JournalTailer(path, Mirror()).poll_now()
    assert update is not None and update.unreadable == () and len(update.new_effects) == 1
    assert update.problems == ("line 2 (seq 1): field 'kind' has the wrong type, shown raw: 5",)


@pytest.mark.parametrize(
    "content, cause",
    [
        (b'{\n  "version": 2,\n  "log": []\n}', "not a JSON object"),
        (b'{"request": {}, "response": {}}\n', "not a header, intent or effect"),
    ],
)
def test_not_a_journal_is_an_error(tmp_path: Path, content: bytes, cause: str) -> None:
    # (a wrongly typed field is no error: it is read and marked, tests/core/fuzz)
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    update = JournalTailer(path, Mirror()).poll_now()
    assert update is not None and update.error is not None and cause in update.error


def test_a_directory_is_an_error(tmp_path: Path) -> None:
    update = JournalTailer(tmp_path, Mirror()).poll_now()
    assert update is not None and update.error == "is a directory, not a file"


def test_final_read_takes_a_last_line_without_newline(tmp_path: Path) -> None:
    path, mirror = tmp_path / "n.jsonl", Mirror()
    tailer = JournalTailer(path, mirror)
    path.write_bytes(header("go") + effect(0, "model", model_result("done")).rstrip(b"\n"))
    assert tailer.poll_now() is not None and mirror.entries == [] and mirror.torn
    final = tailer.poll_now(final=True)
    assert final is not None and not final.torn and final.status == FINISHED
    assert mirror.matches(path)


def test_a_tool_intent_ages_into_a_crash(tmp_path: Path) -> None:
    now = [100.0]
    path = tmp_path / "c.jsonl"
    path.write_bytes(
        header("go") + effect(0, "model", model_result("", ("pay",))) + intent(1, "tool:pay")
    )
    follower = JournalFollower(path, idle_after=5.0, clock=lambda: now[0])
    update = follower.read()
    assert update is not None and update.status == RUNNING
    now[0] += 4.0
    assert follower.tick() is None
    now[0] += 1.0
    aged = follower.tick()
    assert aged is not None and aged.status == STOPPED and aged.new_effects == []
    assert [(u.seq, u.kind) for u in aged.unfinished] == [(1, "tool:pay")]


# -- the thread ------------------------------------------------------------------

MODES = {
    "watchdog": dict(use_watchdog=True, poll_interval=5.0),
    "polling": dict(use_watchdog=False, poll_interval=0.05),
}


@pytest.fixture(params=sorted(MODES))
def mode(request: pytest.FixtureRequest) -> dict[str, Any]:
    return MODES[request.param]


@pytest.fixture
def tailed(tmp_path: Path, mode: dict[str, Any]) -> Iterator[tuple[Path, Mirror, JournalTailer]]:
    path, mirror = tmp_path / "live.jsonl", Mirror()
    with JournalTailer(path, mirror, **mode) as tailer:
        wait_until(lambda: mirror.status == WAITING, "the first update")
        if mode["use_watchdog"] and not tailer.watching_events:
            pytest.skip("no file-system events here")
        yield path, mirror, tailer
    assert mirror.problems == []


def test_writer_thread_bursts_torn_rewrite_recreate(
    tailed: tuple[Path, Mirror, JournalTailer],
) -> None:
    path, mirror, _ = tailed
    writer = WriterThread()

    def bursts(start: int, bursts: int, size: int) -> None:
        for b in range(bursts):
            append(path, b"".join(tool_pairs(start + b * size, size)))

    try:
        writer.run(lambda: path.write_bytes(header("one")))
        writer.run(lambda: bursts(0, 20, 50))
        wait_until(lambda: mirror.matches(path), "bursts followed")
        torn = effect(1000, "model", model_result("half way"))
        writer.run(lambda: append(path, intent(1000, "model") + torn[:25]))
        wait_until(lambda: mirror.torn and mirror.unfinished == [(1000, "model", 0)], "torn line")
        writer.run(lambda: append(path, torn[25:]))
        wait_until(lambda: mirror.matches(path) and not mirror.torn, "torn line completed")
        assert mirror.rewrites == 0
        writer.run(lambda: path.write_bytes(header("one", "two") + b"".join(tool_pairs(0, 30))))
        wait_until(lambda: mirror.matches(path), "truncate and rewrite")
        assert mirror.rewrites == 1
        writer.run(lambda: (path.unlink(), path.write_bytes(header("three"))))
        writer.run(lambda: bursts(0, 5, 10))
        wait_until(lambda: mirror.matches(path), "delete and re-create")
        assert mirror.rewrites == 2 and len(mirror.entries) == 50
    finally:
        writer.close()


def test_events_alone_deliver_updates(tmp_path: Path) -> None:
    path, mirror = tmp_path / "ev.jsonl", Mirror()
    with JournalTailer(path, mirror, poll_interval=120.0) as tailer:
        wait_until(lambda: mirror.status == WAITING, "the first update")
        if not tailer.watching_events:
            pytest.skip("no file-system events here")
        path.write_bytes(header("go") + b"".join(tool_pairs(0, 3)))
        wait_until(lambda: mirror.matches(path), "an update without any polling tick")


def test_a_failing_callback_does_not_stop_the_tailer(tmp_path: Path) -> None:
    path, mirror = tmp_path / "f.jsonl", Mirror()
    calls = [0]

    def flaky(update: Any) -> None:
        calls[0] += 1
        if calls[0] == 1:
            raise RuntimeError("consumer bug")
        mirror(update)

    path.write_bytes(header("go"))
    with JournalTailer(path, flaky, poll_interval=0.05):
        wait_until(lambda: calls[0] >= 1, "the first (failing) update")
        append(path, b"".join(tool_pairs(0, 2)))
        wait_until(lambda: len(mirror.entries) == 2, "updates after the failure")


def test_stop_is_idempotent_and_works_from_a_callback(tmp_path: Path) -> None:
    stopped = threading.Event()
    holder: list[JournalTailer] = []

    def stop_self(update: Any) -> None:
        holder[0].stop()
        stopped.set()

    tailer = JournalTailer(tmp_path / "s.jsonl", stop_self, poll_interval=0.05)
    holder.append(tailer)
    tailer.start()
    assert stopped.wait(15)
    tailer.stop()
    tailer.stop()
    assert not any(
        t.name.startswith("loom-tail") and t.is_alive()
        for t in threading.enumerate()
        if t is not threading.current_thread()
    )
    with pytest.raises(RuntimeError):
        tailer.start()


# -- real loom-harness runs --------------------------------------------------------


def gated_agent(path: Path, gate: threading.Event) -> Agent:
    """An agent whose tool blocks until the test opens ``gate``: a run caught mid-tool."""

    @tool
    def deploy(target: str) -> str:
        """Deploy, slowly."""
        gate.wait(15)
        return f"deployed {target}"

    script = [
        ModelResponse(
            text="",
            tool_calls=[ToolCall("d1", "deploy", {"target": "eu"})],
            stop_reason="tool_use",
            usage={"input_tokens": 9, "output_tokens": 1},
        ),
        ModelResponse(
            text="Deployed.", stop_reason="end_turn", usage={"input_tokens": 12, "output_tokens": 2}
        ),
    ]
    return Agent(
        name="gated",
        system="You deploy.",
        journal=str(path),
        tools=[deploy],
        provider=ScriptedProvider(script),
    )


def in_thread(fn: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(fn()), name="test-agent", daemon=True)
    thread.start()
    return thread, out


def test_a_live_agent_run_is_followed(tailed: tuple[Path, Mirror, JournalTailer]) -> None:
    path, mirror, _ = tailed
    gate = threading.Event()
    thread, out = in_thread(lambda: gated_agent(path, gate).run("Deploy to eu"))
    try:
        wait_until(lambda: mirror.unfinished == [(1, "tool:deploy", 0)], "the tool in flight")
        assert mirror.status == RUNNING and mirror.matches(path)
    finally:
        gate.set()
        thread.join(15)
    assert out and out[0].output == "Deployed."
    wait_until(lambda: mirror.status == FINISHED and mirror.matches(path), "the finished run")
    assert mirror.rewrites == 0


def test_paused_then_resumed_run(tailed: tuple[Path, Mirror, JournalTailer]) -> None:
    path, mirror, _ = tailed
    paused = paused_journal_agent(path).run("Go somewhere")
    assert paused.paused
    wait_until(lambda: mirror.status == HUMAN and mirror.matches(path), "waiting on a human")
    thread, out = in_thread(lambda: paused.resume("yes"))
    thread.join(15)
    assert out and out[0].output == "went"
    wait_until(lambda: mirror.status == FINISHED and mirror.matches(path), "the resumed run")
    assert mirror.rewrites == 1 and REWRITTEN in mirror.statuses


def test_crashed_then_recovered_run(tmp_path: Path, mode: dict[str, Any]) -> None:
    path, mirror = tmp_path / "crash.jsonl", Mirror()
    with JournalTailer(path, mirror, idle_after=0.2, **mode):
        with pytest.raises(Crash):
            crashing_agent(path).run("Bill the customer")
        wait_until(lambda: mirror.status == STOPPED and mirror.matches(path), "crashed mid-tool")
        assert mirror.unfinished == [(2, "tool:charge_card", 0)]
        run = Run.recover(
            str(path), crashing_agent(path, crash=False, skip=1), on_unfinished="retry"
        )
        assert run.output == "charged"
        wait_until(lambda: mirror.status == FINISHED and mirror.matches(path), "recovered run")
        assert mirror.rewrites == 1 and mirror.problems == []
    assert os.path.exists(path)


def test_an_access_error_clears_when_the_path_becomes_a_journal(tmp_path: Path) -> None:
    path, mirror = tmp_path / "later.jsonl", Mirror()
    path.mkdir()
    tailer = JournalTailer(path, mirror)
    assert tailer.poll_now() is not None and mirror.error == "is a directory, not a file"
    assert tailer.poll_now() is None  # the same error is not reported again
    path.rmdir()
    path.write_bytes(header("go"))
    update = tailer.poll_now()
    assert update is not None and update.error is None and mirror.matches(path)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_on_linux_one_thread_follows_a_file(tmp_path: Path) -> None:
    """The tailer waits on inotify in its own thread: no watchdog threads wake per line
    (each would take the interpreter lock the GUI thread needs to show the row)."""
    path, mirror = tmp_path / "one.jsonl", Mirror()
    before = {t.ident for t in threading.enumerate()}
    with JournalTailer(path, mirror, poll_interval=120.0) as tailer:
        wait_until(lambda: mirror.status == WAITING, "the first update")
        assert tailer.watching_events
        path.write_bytes(header("go") + b"".join(tool_pairs(0, 3)))
        wait_until(lambda: mirror.matches(path), "an update from an event")
        for n in range(3, 6):
            append(path, b"".join(tool_pairs(n, 1)))
            wait_until(lambda n=n: len(mirror.entries) == n + 1, "each appended line")
        started = [t.name for t in threading.enumerate() if t.ident not in before]
    assert started == [tailer._thread.name if tailer._thread else ""]
