"""``python -m loom_core doctor``: its output, its JSON and its exit codes.

Why subprocesses: the contract is the command line's (exit 0 healthy, 1 with
findings, 2 with exactly one stderr line on bad input, never a traceback).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.core.clis import core
from tests.core.doctor.traces import Trace


def healthy(tmp_path: Path) -> Path:
    t = Trace("hi")
    t.model("hello")
    return t.save(tmp_path / "healthy.loom.json")


def sick(tmp_path: Path) -> Path:
    t = Trace("look it up")
    t.use("lookup", "zeppelin marmalade quantum", q="x")
    for _ in range(3):
        t.use("deploy", "ERROR: RuntimeError: quota", env="prod")
    t.model("done")
    return t.save(tmp_path / "sick.loom.json")


def test_healthy_exits_0(tmp_path: Path) -> None:
    done = core("doctor", healthy(tmp_path))
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "context looks healthy (2 tokens, no findings)\n"


def test_findings_exit_1_in_loom_doctors_layout(tmp_path: Path) -> None:
    done = core("doctor", sick(tmp_path))
    assert (done.returncode, done.stderr) == (1, "")
    lines = done.stdout.splitlines()
    assert lines[0].endswith(" tokens of context:") and lines[0].split()[1] == "finding(s)"
    n = int(lines[0].split()[0])
    assert len(lines) == 1 + 2 * n
    assert lines[1] == (
        "  [warn] unused: tool:lookup result (6 tokens) never referenced by any later answer"
    )
    assert lines[2] == "      'zeppelin marmalade quantum' at step 1"
    assert any(line.startswith("  [high] error_loop: deploy(") for line in lines)


def test_json(tmp_path: Path) -> None:
    done = core("doctor", sick(tmp_path), "--json")
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["total_tokens"] > 0 and data["path"].endswith("sick.loom.json")
    kinds = [f["kind"] for f in data["findings"]]
    assert "unused" in kinds and "error_loop" in kinds
    unused = data["findings"][kinds.index("unused")]
    assert unused["step"] == 1 and unused["redact_targets"] is None
    assert data["redactions"][unused["redact_prefix"]] == [1]
    loop = data["findings"][kinds.index("error_loop")]
    assert loop["redact_targets"] == [3, 5, 7] and loop["severity"] == "high"
    assert set(loop) >= {
        "kind",
        "severity",
        "step",
        "effect",
        "tokens",
        "share",
        "message",
        "snippet",
        "related",
        "redact_targets",
        "model_step",
    }
    clean = core("doctor", healthy(tmp_path), "--json")
    assert clean.returncode == 0 and json.loads(clean.stdout)["findings"] == []


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.loom.json"
    broken.write_text('{"version": 2, "log": [')
    for path in (broken, tmp_path / "missing.loom.json"):
        done = core("doctor", path)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and str(path) in done.stderr
        assert "Traceback" not in done.stderr
