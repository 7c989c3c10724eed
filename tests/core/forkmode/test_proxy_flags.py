"""``python -m loom_core proxy --fork-from TRACE --fork-at N --fork-edit JSON``: fork mode
in a standalone proxy, driven by the agent started by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.core.clis import core
from tests.core.forkmode.conftest import AGENT, NOTE, Parent
from tests.core.proxy.harness import ANTHROPIC_KEY, loom_accepts
from tests.core.proxy.procs import ProxyProcess


def test_the_proxy_flags_fork_a_run(tmp_path: Path, parent: Parent) -> None:
    before, branch = parent.calls(), tmp_path / "branch.loom.json"
    with ProxyProcess(
        tmp_path,
        "--target",
        parent.upstream.url,
        "--save",
        str(branch),
        "--fork-from",
        str(parent.trace),
        "--fork-at",
        "1",
        "--fork-edit",
        json.dumps({"inject": NOTE}),
    ) as proxy:
        done = subprocess.run(
            [sys.executable, str(AGENT)],
            cwd=parent.workdir,
            timeout=60,
            capture_output=True,
            text=True,
            env={**os.environ, "ANTHROPIC_API_KEY": ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": proxy.url},
        )
        assert "answer: La note dit : hello" in done.stdout, done.stdout + done.stderr
        assert proxy.stop() == 0
    assert "(forking " in proxy.out.read_text()
    assert parent.calls() - before == 2  # model call 0 came from the recording
    new, old = json.loads(branch.read_text()), json.loads(parent.trace.read_text())
    assert new["log"][:2] == old["log"][:2] and new["output"] == "La note dit : hello"
    loom_accepts(branch)


def test_bad_fork_flags_exit_2(tmp_path: Path, parent: Parent) -> None:
    save = str(tmp_path / "b.loom.json")
    done = core(
        "proxy", "--port", "0", "--save", save, "--fork-from", parent.trace, "--fork-at", "3"
    )
    assert done.returncode == 2
    assert "fork exchange 3 is out of range (the recording has 3 model call(s))" in done.stderr
    done = core(
        "proxy", "--port", "0", "--save", save, "--fork-from", parent.trace, "--fork-edit", "[1]"
    )
    assert done.returncode == 2 and "expected a JSON object" in done.stderr
    done = core(
        "proxy",
        "--port",
        "0",
        "--save",
        save,
        "--fork-from",
        parent.trace,
        "--fork-edit",
        '{"nonsense": 1}',
    )
    assert done.returncode == 2 and "--fork-edit: not an edit" in done.stderr
    assert not Path(save).exists()
