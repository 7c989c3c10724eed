"""Agent re-run end to end: a real agent (anthropic SDK, two local tools) recorded with
``record -- python agent.py``, then re-run from a model step with an edit."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from loom_core.fork.agent_rerun import AgentRerunError, agent_rerun
from loom_core.fork.edits import Edit
from loom_core.formats.canonical import effect_key
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict
from loom_core.providers.base import CancelToken
from tests.core.clis import LOOM
from tests.core.forkmode.conftest import AGENT, NOTE, Parent, record_parent
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.harness import loom_accepts

pytestmark = pytest.mark.usefixtures("keys")


def kinds(trace: dict) -> list[str]:
    return [e["kind"] for e in trace["log"]]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_inject_fork_serves_the_prefix_and_reruns_the_tools(
    tmp_path: Path, upstream: FakeUpstream, stream: bool
) -> None:
    parent = record_parent(tmp_path, upstream, stream=stream)
    before = parent.calls()
    out = tmp_path / "branch.loom.json"
    lines: list[str] = []
    edit = Edit(inject=NOTE, reason="does it answer in French?")
    result = agent_rerun(parent.trace, 2, edit, out, target=upstream.url, on_line=lines.append)

    assert result.path == out and result.exit_code == 0, lines
    assert (result.served, result.live, result.diverged_early) == (1, 2, False)
    assert "answer: La note dit : hello" in lines
    # the prefix (model call 0) never reached the model; the fork call and the tail did
    sent = parent.bodies_since(before)
    assert len(sent) == 2
    assert all(b.get("stream", False) == stream for b in sent)
    assert sent[0]["messages"][-1]["content"][-1] == {"type": "text", "text": NOTE}
    assert sent[1]["messages"][2]["content"][-1] == {"type": "text", "text": NOTE}  # re-applied
    assert NOTE not in json.dumps(sent[1]["messages"][3:])
    # the agent's tools ran again in the recorded cwd
    assert (parent.workdir / "writes.txt").read_text() == "2"

    old, new = json.loads(parent.trace.read_text()), json.loads(out.read_text())
    assert kinds(old) == ["model", "tool:write_note", "model", "tool:read_note", "model"]
    assert kinds(new) == ["model", "tool:write_note", "edit", "model", "tool:read_note", "model"]
    assert new["log"][:2] == old["log"][:2]  # the prefix: identical effects
    assert new["wire"][0] == old["wire"][0]
    edit_effect = new["log"][2]
    assert edit_effect["key"] == effect_key("edit", {"turn": 1})
    assert [(i["role"], i["source"]) for i in edit_effect["result"]] == [
        ("user", "episode"),
        ("assistant", "assistant"),
        ("tool", "tool"),
        ("user", "fork-edit"),
    ]
    assert edit_effect["result"][2]["name"] == "write_note"
    assert new["output"] == "La note dit : hello" and old["output"] == "The note says: hello"
    fork = new["fork"]
    assert fork["parent"] == {"path": str(parent.trace), "checksum": old["checksum"]}
    assert (
        fork["step"],
        fork["turn"],
        fork["mode"],
        fork["status"],
        fork["exit_code"],
        fork["diverged_early"],
    ) == (2, 1, "agent", "done", 0, False)
    assert fork["edit"] == edit.to_dict() and fork["reason"] == edit.reason
    assert fork["created_at"].endswith("+00:00") and fork["edit_seq"] == 2
    assert new["workspace"]["argv"] == old["workspace"]["argv"]
    assert list(new)[-3:] == ["workspace", "fork", "checksum"]
    loom_accepts(out)
    assert load(out).warnings == ()


def test_early_divergence_goes_live_and_is_flagged(tmp_path: Path, parent: Parent) -> None:
    (parent.workdir / "diverge.txt").write_text("the prompt changes")
    before = parent.calls()
    out = tmp_path / "branch.loom.json"
    result = agent_rerun(parent.trace, 4, Edit(inject=NOTE), out, target=parent.upstream.url)

    assert result.diverged_early and (result.served, result.live) == (0, 3)
    sent = parent.bodies_since(before)
    assert len(sent) == 3  # nothing could be served: the first prompt differs
    assert [NOTE in json.dumps(b) for b in sent] == [False, False, True]  # edit at call 2
    new = json.loads(out.read_text())
    assert new["fork"]["diverged_early"] is True and new["output"].startswith("La note dit")
    assert kinds(new)[-2:] == ["edit", "model"]
    loom_accepts(out)


def test_a_parent_without_workspace_is_refused(tmp_path: Path, parent: Parent) -> None:
    data = json.loads(parent.trace.read_text())
    del data["workspace"]
    bare = tmp_path / "bare.loom.json"
    save_dict(data, bare)
    with pytest.raises(
        AgentRerunError,
        match=r"not recorded with `record -- COMMAND`; "
        r"use the model re-run",
    ):
        agent_rerun(bare, 2, Edit(inject=NOTE), tmp_path / "b.loom.json")
    with pytest.raises(
        AgentRerunError,
        match=r"step 1 is a tool:write_note step; fork at a "
        r"model step \(0, 2, 4\)",
    ):
        agent_rerun(parent.trace, 1, Edit(), tmp_path / "b.loom.json")
    with pytest.raises(AgentRerunError, match="cannot apply a tools edit"):
        agent_rerun(parent.trace, 2, Edit(tools=[]), tmp_path / "b.loom.json")
    with pytest.raises(AgentRerunError, match="redact: step 2 is not a recorded tool result"):
        agent_rerun(parent.trace, 2, Edit(redact=[2]), tmp_path / "b.loom.json")
    assert parent.calls() == 3 and not (tmp_path / "b.loom.json").exists()


def _refused(url: str) -> bool:
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=2).close()
    except OSError:
        return True
    return False


def test_cancel_stops_the_agent_and_the_proxy(tmp_path: Path, parent: Parent) -> None:
    (parent.workdir / "hang.txt").write_text("sleep after the first call")
    cancel, seen = CancelToken(), []

    def on_line(line: str) -> None:
        seen.append(line)
        if line == "hanging":
            cancel.cancel()

    out = tmp_path / "branch.loom.json"
    result = agent_rerun(
        parent.trace,
        2,
        Edit(inject=NOTE),
        out,
        target=parent.upstream.url,
        timeout=60,
        cancel=cancel,
        on_line=on_line,
    )
    assert result.cancelled and not result.timed_out and result.exit_code is None
    pid = int((parent.workdir / "pid.txt").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    base = next(line.split()[1] for line in seen if line.startswith("base "))
    assert _refused(base)  # the fork proxy is gone
    new = json.loads(out.read_text())  # what was recorded until then: the served prefix
    assert kinds(new) == ["model"] and new["fork"]["status"] == "cancelled"
    assert new["fork"]["exit_code"] is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loom_accepts(out)


def test_timeout_stops_the_agent(tmp_path: Path, parent: Parent) -> None:
    (parent.workdir / "hang.txt").write_text("sleep after the first call")
    (parent.workdir / "pid.txt").unlink()
    result = agent_rerun(
        parent.trace, 2, Edit(), tmp_path / "b.loom.json", target=parent.upstream.url, timeout=1.0
    )  # the agent sleeps 60 s
    assert result.timed_out and not result.cancelled and result.exit_code is None
    assert result.fork["status"] == "timeout"
    if (parent.workdir / "pid.txt").exists():  # the agent got that far before the timeout
        with pytest.raises(ProcessLookupError):
            os.kill(int((parent.workdir / "pid.txt").read_text()), 0)


def test_openai_chat_agent_with_system_model_and_sampling_edits(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    parent = record_parent(tmp_path, upstream, dialect="openai")
    before = parent.calls()
    out = tmp_path / "branch.loom.json"
    edit = Edit(inject=NOTE, system="You are terse.", model="gpt-other", temperature=0.2)
    result = agent_rerun(parent.trace, 2, edit, out, target=upstream.url)

    assert (result.exit_code, result.served, result.live) == (0, 1, 2)
    sent = parent.bodies_since(before)
    assert len(sent) == 2
    for body in sent:
        assert body["model"] == "gpt-other" and body["temperature"] == 0.2
        assert body["messages"][0] == {"role": "system", "content": "You are terse."}
        assert body["messages"][4] == {"role": "user", "content": NOTE}  # after the tool result
    assert sent[0]["messages"][3]["role"] == "tool" and len(sent[0]["messages"]) == 5
    assert [m["role"] for m in sent[1]["messages"][4:]] == ["user", "assistant", "tool"]
    new = json.loads(out.read_text())
    assert new["output"] == "La note dit : hello" and new["workspace"]["dialect"] == "openai"
    assert kinds(new) == ["model", "tool:write_note", "edit", "model", "tool:read_note", "model"]
    snapshot = new["log"][2]["result"]
    assert [(i["role"], i["source"]) for i in snapshot][-2:] == [
        ("tool", "tool"),
        ("user", "fork-edit"),
    ]
    loom_accepts(out)


def test_a_loom_harness_recording_forks_by_position(tmp_path: Path, upstream: FakeUpstream) -> None:
    """``loom record`` writes no exchange sidecar: the prefix is served in order."""
    workdir, trace = tmp_path / "work", tmp_path / "harness.loom.json"
    workdir.mkdir()
    done = subprocess.run(
        [
            str(LOOM),
            "record",
            "--target",
            upstream.url,
            "--save",
            str(trace),
            "--",
            sys.executable,
            str(AGENT),
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "answer: The note says: hello" in done.stdout, done.stderr
    before, out = len(upstream.seen), tmp_path / "branch.loom.json"
    result = agent_rerun(trace, 2, Edit(inject=NOTE), out, target=upstream.url)
    assert (result.served, result.live, result.fork["matching"]) == (1, 2, "position")
    assert len(upstream.seen) - before == 2 and (workdir / "writes.txt").read_text() == "2"
    new, old = json.loads(out.read_text()), json.loads(trace.read_text())
    same = ("seq", "kind", "key", "result")  # (loom-harness adds a sys_role guess to meta)
    assert [[e[k] for k in same] for e in new["log"][:2]] == [
        [e[k] for k in same] for e in old["log"][:2]
    ]
    assert new["output"] == "La note dit : hello"
    loom_accepts(out)
