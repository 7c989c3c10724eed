"""Fixtures for the agent re-run tests: a deterministic fake model and recorded parents.

The fake model (:func:`responder`) answers from what it is sent, like a model would:
no tool result yet -> call ``write_note``; one -> call ``read_note``; two -> the
final answer, in French when :data:`NOTE` is anywhere in the request. So a fork that
injects the note changes the tail, and only if the note reaches the model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, OPENAI_KEY, running_upstream

AGENT = Path(__file__).with_name("agent.py")
NOTE = "Answer in French."


def tool_results(endpoint: str, body: dict[str, Any]) -> list[str]:
    """The tool results in a request, in order, as text."""
    out = []
    for m in body.get("messages") or []:
        if endpoint == "chat/completions" and m.get("role") == "tool":
            out.append(str(m.get("content")))
        elif isinstance(m.get("content"), list):
            out += [str(b.get("content")) for b in m["content"] if b.get("type") == "tool_result"]
    return out


def responder(endpoint: str, body: dict[str, Any]) -> Reply:
    results = tool_results(endpoint, body)
    if not results:
        return Reply(calls=[("call_w1", "write_note", {"text": "hello"})])
    if len(results) == 1:
        return Reply(text="Now reading.", calls=[("call_r1", "read_note", {})])
    french = NOTE in json.dumps(body)
    return Reply(text=("La note dit : " if french else "The note says: ") + results[-1])


@dataclass
class Parent:
    """A recorded run: the trace, the agent's working directory, the fake model."""

    trace: Path
    workdir: Path
    upstream: FakeUpstream

    def calls(self) -> int:
        return len(self.upstream.seen)

    def bodies_since(self, count: int) -> list[dict[str, Any]]:
        return [s.body for s in self.upstream.seen[count:]]


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake API keys for the agent (agent_rerun passes our environment on)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream(responder) as fake:
        yield fake


def record_parent(
    tmp: Path, upstream: FakeUpstream, dialect: str = "anthropic", stream: bool = False
) -> Parent:
    """``python -m loom_core record -- python agent.py DIALECT`` in a fresh workdir."""
    workdir = tmp / "work"
    workdir.mkdir()
    if stream:
        (workdir / "stream.txt").write_text("yes")
    trace = tmp / "parent.loom.json"
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
            dialect,
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "answer: The note says: hello" in done.stdout, done.stdout
    assert (workdir / "writes.txt").read_text() == "1"
    return Parent(trace, workdir, upstream)


@pytest.fixture
def parent(tmp_path: Path, upstream: FakeUpstream) -> Parent:
    return record_parent(tmp_path, upstream)
