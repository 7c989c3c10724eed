"""``summary --json`` with its checksum child (issue 14): loom-harness's checksum verdicts,
one stderr line on bad input, and no child or descriptor left behind on any path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from loom_core.cli.entry import main
from loom_core.formats import checksum_plan, fastcheck
from tests.core.children import no_children_left, open_fds, wait_until_alone
from tests.core.harness_runs import Recorded


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fork for any size, one item per chunk; the checksum jobs started are listed (no
    other thread running: the checksum forks only a one-thread process)."""
    left = wait_until_alone()
    assert not left, f"threads still running, so the checksum would not fork: {left}"
    monkeypatch.setattr(fastcheck, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(checksum_plan, "CHUNK_BYTES", 1)
    started: list[Any] = []
    real = fastcheck.ParallelChecksum.start.__func__  # type: ignore[attr-defined]

    def start(cls: type, data: bytes) -> Any:
        started.append(real(cls, data))
        return started[-1]

    monkeypatch.setattr(fastcheck.ParallelChecksum, "start", classmethod(start))
    return started


def _summary(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["summary", "--json", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_harness_traces_verify_through_the_child(
    harness_traces: dict[str, Recorded],
    jobs: list[Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "t.loom.json"
    shutil.copy(harness_traces["tools"].path, path)
    code, out, _ = _summary(path, capsys)
    assert code == 0 and json.loads(out)["checksum"] == "valid"
    assert jobs and jobs[0] is not None and len(jobs[0].plan.chunks) > 1  # the fork path ran
    doc = json.loads(path.read_text())
    doc["log"][-1]["depth"] = 7  # an edit in the last chunk, which the caller computes
    path.write_text(json.dumps(doc, indent=2))
    code, out, _ = _summary(path, capsys)
    assert code == 0 and json.loads(out)["checksum"] == "mismatch"
    assert no_children_left()


def test_a_failed_load_reaps_the_child_and_says_one_line(
    jobs: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "newer.loom.json"
    log = [{"seq": i, "kind": "tool:t", "result": "x" * 50} for i in range(40)]
    path.write_text(json.dumps({"version": 99, "log": log, "checksum": "sha256:0"}))
    fds = open_fds()
    code, out, err = _summary(path, capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and str(path) in err and "newer" in err
    assert jobs and jobs[0] is not None  # it had forked before the load failed
    assert no_children_left() and open_fds() == fds


def test_a_file_that_is_no_trace_still_summarises(
    jobs: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.journal.jsonl"
    lines = [{"type": "header", "version": 1, "model": "m", "prompt": "p"}]
    lines += [{"type": "effect", "seq": i, "kind": "tool:t", "result": "r"} for i in range(5)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, out, err = _summary(path, capsys)
    assert code == 0 and err == ""
    facts = json.loads(out)
    assert facts["format"] == "journal" and facts["checksum"] == "absent"
    assert len(jobs) == 1 and jobs[0] is not None  # its first line is an object: it forked
    assert no_children_left()  # and the child, not needed, was stopped and reaped
