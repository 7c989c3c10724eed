"""``fork --mode agent`` as a command line: flags, exit codes, one-line errors."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loom_core.fork.agent_cli import add_agent_mode_args
from tests.core.clis import ROOT
from tests.core.forkmode.conftest import NOTE, Parent
from tests.core.proxy.harness import ANTHROPIC_KEY


def agent_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loom_core.fork.agent_cli", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ANTHROPIC_API_KEY": ANTHROPIC_KEY},
    )


def test_cli_writes_the_branch_and_reports_json(tmp_path: Path, parent: Parent) -> None:
    out = tmp_path / "cli.loom.json"
    done = agent_cli(
        parent.trace, "--step", "2", "--inject", NOTE, "--reason", "French?", "-o", out, "--json"
    )  # no --target: the parent's recorded one
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["path"] == str(out) and (result["served"], result["live"]) == (1, 2)
    assert result["fork"]["reason"] == "French?" and result["fork"]["target"] == parent.upstream.url
    assert "answer: La note dit : hello" in done.stderr.splitlines()  # the agent's output
    assert json.loads(out.read_text())["fork"]["mode"] == "agent"


@pytest.mark.parametrize(
    "args, words",
    [
        (["--step", "1"], "step 1 is a tool:write_note step"),
        (["--step", "2", "--redact", "4"], "redact: step 4 is not a recorded tool result"),
        (["--inject", "x"], "needs a trace and --step"),
    ],
)
def test_bad_input_exits_2_with_one_line(parent: Parent, args: list[str], words: str) -> None:
    done = agent_cli(parent.trace, *args)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("error: ")
    assert words in done.stderr, done.stderr
    assert parent.calls() == 3  # nothing was run


def test_a_missing_parent_is_one_line_too(tmp_path: Path) -> None:
    done = agent_cli(tmp_path / "nope.loom.json", "--step", "0")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "nope.loom.json" in done.stderr


def test_flags_the_fork_command_already_has_are_left_to_it() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--step", type=int)
    p.add_argument("-o", "--output")
    p.add_argument("--json", action="store_true")
    add_agent_mode_args(p)  # no conflict
    args = p.parse_args(
        [
            "t.loom.json",
            "--step",
            "4",
            "--inject",
            "n",
            "--redact",
            "1",
            "--redact",
            "3",
            "--timeout",
            "9",
            "--json",
        ]
    )
    assert (args.trace, args.step, args.inject, args.redact, args.timeout, args.json) == (
        "t.loom.json",
        4,
        "n",
        [1, 3],
        9.0,
        True,
    )
