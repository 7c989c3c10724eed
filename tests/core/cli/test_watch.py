"""``python -m loom_core watch``: effects printed as they land, statuses, clean exits.

Why subprocesses: the contract is what a user or a script sees -- lines on stdout
while the file grows (not only at the end), exit 0 when idle or signalled, exit 2
with one stderr line for bad input -- and only the real entry point shows that.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loom.journal import Journal

from tests.core.clis import ROOT, core, loom
from tests.core.harness_runs import journal_complete, journal_crashed, paused_journal_agent

WAIT = 20.0  # generous: a line normally shows up within milliseconds


class Watch:
    """``watch PATH ARGS`` as a subprocess, its stdout lines read by an owned thread."""

    def __init__(self, path: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "loom_core", "watch", str(path), *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, name="test-watch-stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_json(self, timeout: float = WAIT) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        assert line is not None, f"watch ended early; stderr: {self.stderr()}"
        self.seen.append(line)
        return dict(json.loads(line))

    def expect(self, **members: Any) -> dict[str, Any]:
        """Skip lines until one has ``members`` (at most 1,000 lines / ``WAIT`` each)."""
        for _ in range(1000):
            obj = self.next_json()
            if all(obj.get(k) == v for k, v in members.items()):
                return obj
        raise AssertionError(f"no line with {members}")

    def finish(self, timeout: float = WAIT) -> tuple[int, list[str]]:
        """Wait for the process to exit on its own; its code and the remaining lines."""
        code = self.proc.wait(timeout)
        self._reader.join(timeout)
        rest = []
        for _ in range(100_000):
            line = self.lines.get(timeout=timeout)
            if line is None:
                break
            rest.append(line)
        self.seen += rest
        return code, rest

    def stderr(self) -> str:
        return self.proc.stderr.read() if self.proc.stderr and self.proc.poll() is not None else ""

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)
        self._reader.join(WAIT)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


@pytest.fixture
def watch() -> Iterator[list[Watch]]:
    started: list[Watch] = []
    yield started
    for w in started:
        w.kill()


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def test_json_lines_follow_a_growing_then_rewritten_journal(
    tmp_path: Path, watch: list[Watch]
) -> None:
    paused = tmp_path / "src" / "paused.jsonl"
    paused.parent.mkdir()
    run = paused_journal_agent(paused).run("Go somewhere")
    src_paused = lines_of(paused)
    run.resume("yes")
    src_resumed = lines_of(paused)
    path = tmp_path / "live.jsonl"
    w = Watch(path, "--json-lines", "--until-idle", "1.5", "--poll", "0.1")
    watch.append(w)
    w.expect(status="waiting", why="for the file to be created")  # it does not exist yet
    for line in src_paused:  # one line at a time; each effect must show before the next
        append(path, line)
        if b'"type": "effect"' in line:
            seq = json.loads(line)["seq"]
            got = w.expect(seq=seq)
            assert (got["kind"], got["depth"]) == (json.loads(line)["kind"], 0)
    assert w.expect(status="waiting on a human")["unfinished"] == [
        {"seq": 1, "kind": "human", "depth": 0}
    ]
    path.write_bytes(b"".join(src_resumed))  # what resume() does: truncate and rewrite
    w.expect(status="rewritten")
    _, entries, _ = Journal.read_full(str(path))
    replayed = [w.next_json() for _ in entries]
    assert [(e["seq"], e["kind"], e["depth"]) for e in replayed] == [
        (e.seq, e.kind, e.depth) for e in entries
    ]
    assert replayed[0]["tokens"] == {"input": 40, "output": 4} and replayed[1]["key"] == "resumed"
    code, rest = w.finish()
    assert code == 0
    assert [json.loads(line) for line in rest][-1] == {"status": "finished", "effects": 3}


def test_human_format_is_loom_watch_with_steps_described_as_summary_does(tmp_path: Path) -> None:
    """loom's watch lines, except that a model step is its calls (or text) and a clock
    reading a date, as ``summary`` says them, where loom's watch printed raw JSON."""
    path, _ = journal_complete(tmp_path)
    mine, theirs = core("watch", path, "--until-idle", "0.3"), loom("watch", path, "--once")
    assert mine.returncode == theirs.returncode == 0 and mine.stderr == ""
    ours = [line for line in mine.stdout.splitlines() if not line.startswith("--")]
    loom_lines = theirs.stdout.splitlines()
    assert len(ours) == len(loom_lines) and ours[0] == loom_lines[0]
    for mine_line, loom_line in zip(ours[1:], loom_lines[1:], strict=True):
        kind = loom_line[8:].split()[0]
        assert mine_line == loom_line or kind in ("model", "time"), (mine_line, loom_line)
    assert (
        ours[2] == '  [  1] model          calls read_file({"path": "a"}), explode({"reason": "x"})'
    )
    assert ours[5] == "  [  4] model          ok ü" and ours[6].endswith("second answer ✓")
    assert re.fullmatch(r"  \[  0\] time +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC", ours[1])
    assert mine.stdout.splitlines()[-1] == "-- finished --"
    summary = core("summary", path).stdout
    assert 'calls read_file({"path": "a"}), explode({"reason": "x"})' in summary


def test_a_crashed_journal_ends_stopped_inside_its_tool(tmp_path: Path) -> None:
    path = journal_crashed(tmp_path)
    done = core("watch", path, "--json-lines", "--until-idle", "0.3")
    assert done.returncode == 0, done.stderr
    objs = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["kind"] for o in objs if "seq" in o] == ["model", "tool:read_file"]
    why = objs[-1].pop("why")
    assert objs[-1] == {
        "status": "stopped without finishing",
        "effects": 2,
        "unfinished": [{"seq": 2, "kind": "tool:charge_card", "depth": 0}],
    }
    assert why.startswith("crashed inside tool:charge_card (step 2)")  # then how it is known


@pytest.mark.parametrize(
    "make, cause",
    [
        (lambda p: p.mkdir(), "is a directory, not a file"),
        (lambda p: p.write_text('{\n  "version": 2,\n  "log": []\n}\n'), "not a loom journal"),
        (lambda p: p.write_bytes(b"\x00\xff\xfe binary\n"), "not a loom journal"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, make: Any, cause: str) -> None:
    path = tmp_path / "bad.jsonl"
    make(path)
    done = core("watch", path, "--until-idle", "5")
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and done.stdout == "" and len(lines) == 1
    assert lines[0].startswith(f"error: {path}: ") and cause in lines[0]


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_watch_cleanly(tmp_path: Path, watch: list[Watch], sig: int) -> None:
    w = Watch(tmp_path / "never.jsonl", "--json-lines")
    watch.append(w)
    w.expect(status="waiting")
    w.proc.send_signal(sig)
    code, _ = w.finish()
    assert code == 0 and w.stderr() == ""


def test_an_unreadable_line_is_a_status_with_its_number_and_the_watch_goes_on(
    tmp_path: Path, watch: list[Watch]
) -> None:
    from tests.core.live_helpers import effect, header, model_result

    path = tmp_path / "live.jsonl"
    path.write_bytes(header("go") + effect(0, "model", model_result("go", ("x",))))
    w = Watch(path, "--json-lines", "--until-idle", "1.5", "--poll", "0.05")
    watch.append(w)
    w.expect(seq=0)
    deep = effect(1, "tool:x", "ok").replace(b'"ok"', b"[" * 1000 + b"]" * 1000)
    bad_utf8 = effect(2, "tool:x", "ok").replace(b'"ok"', b'"\xff"')
    append(path, deep + bad_utf8 + effect(3, "model", model_result("done")))
    assert w.expect(seq=3)["kind"] == "model"  # the line after them is still followed
    first = w.expect(status="unreadable line")
    second = w.expect(status="unreadable line")
    assert (first["line"], first["cause"]) == (3, "nested too deeply")
    assert second["line"] == 4 and second["cause"].startswith("not UTF-8 text")
    assert w.expect(status="finished")["effects"] == 2
    code, _ = w.finish()
    assert code == 0 and w.stderr() == ""


def test_human_format_names_an_unreadable_line(tmp_path: Path) -> None:
    from tests.core.live_helpers import effect, header, model_result

    path = tmp_path / "h.jsonl"
    path.write_bytes(
        b'{"type": "header", "version": "x"}\n'
        + header("go")
        + effect(0, "model", model_result("done"))
    )
    done = core("watch", path, "--until-idle", "0.3")
    assert done.returncode == 0 and done.stderr == ""
    assert (
        """-- line 1 cannot be read: wrong type in header member 'version': "x" (skipped) --"""
        in done.stdout.splitlines()
    )
    assert done.stdout.splitlines()[-1] == "-- finished --"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="writers are seen via /proc")
def test_a_run_whose_writer_is_gone_ends_stopped_without_finishing(tmp_path: Path) -> None:
    from tests.core.live_helpers import effect, header, model_result

    path = tmp_path / "gone.jsonl"  # asked for a tool, then nobody wrote again
    path.write_bytes(header("go") + effect(0, "model", model_result("go", ("x",))))
    done = core("watch", path, "--json-lines", "--until-idle", "0.3")
    assert done.returncode == 0, done.stderr
    last = json.loads(done.stdout.splitlines()[-1])
    why = last.pop("why")
    assert last == {"status": "stopped without finishing", "effects": 1}
    assert why.startswith("no process on this machine has the journal open for writing")
