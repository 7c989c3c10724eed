"""Heal in agent re-run mode: a real SDK agent recorded with ``record --`` read a poisoned
file; the winning repair re-runs the agent itself, its request redacted at the fork step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.core.clis import core
from tests.core.fork.checks import loom_ok, read
from tests.core.forkmode.conftest import AGENT, tool_results
from tests.core.heal.scenario import BAD, GOOD, POISON
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, running_upstream


def responder(endpoint: str, body: dict[str, Any]) -> Reply:
    """Read the note first; then answer -- wrongly whenever the poison was sent."""
    results = tool_results(endpoint, body)
    if not results:
        return Reply(calls=[("call_r1", "read_note", {})])
    return Reply(text=BAD if POISON.strip() in json.dumps(body) else GOOD)


def test_heal_reruns_the_recorded_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    work = tmp_path / "work"
    work.mkdir()
    (work / "note.txt").write_text("Vendor page. " + POISON * 60)
    trace = tmp_path / "parent.loom.json"
    with running_upstream(responder) as upstream:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "loom_core",
                "record",
                "--target",
                upstream.url,
                "--save",
                str(trace),
                "--",
                sys.executable,
                str(AGENT),
                "anthropic",
            ],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "ANTHROPIC_API_KEY": ANTHROPIC_KEY},
        )
        assert done.returncode == 0 and f"answer: {BAD}" in done.stdout, done.stdout + done.stderr
        recorded = len(upstream.seen)
        healed = core(
            "heal",
            trace,
            "--mode",
            "agent",
            "--forbid",
            BAD,
            "--out-dir",
            tmp_path / "cands",
            "--json",
        )
        assert healed.returncode == 0, healed.stdout + healed.stderr
        result = json.loads(healed.stdout)
        # the prefix (the first call) came from the recording: one live call, redacted
        live = [s.body for s in upstream.seen[recorded:]]
    assert result["status"] == "healed" and result["winner"].startswith("redact-oversized-")
    assert len(live) == 1 and POISON.strip() not in json.dumps(live[0])
    branch = read(Path(result["winner_path"]))
    assert branch["fork"]["mode"] == "agent" and branch["healed_by"] == result["winner"]
    assert branch["output"] == GOOD
    loom_ok(Path(result["winner_path"]))
