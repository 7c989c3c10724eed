"""The approval control plane of our proxy (loom-format.md §7.7), driven like a user would.

Why these pieces: the agent is the real ``anthropic`` SDK (its request must stay
open while a call is held), the operator is our ``ControlClient``, our CLI and
loom-harness's own ``loom approvals``/``loom approve`` (which must drive our proxy
unchanged, through the same token file), and the written trace must satisfy
``loom trace verify``. Every held call runs in one worker thread with bounded waits.
"""

from __future__ import annotations

import http.client
import json
import os
import stat
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import pytest

from loom_core.proxy.config import ShieldFlags
from loom_core.proxy.control import loopback_host
from loom_core.proxy.control_client import ControlClient, ControlError, PendingCall
from tests.core.clis import core, loom
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.hangup import HangingUpAgent
from tests.core.proxy.harness import (
    ANTHROPIC_KEY,
    CLIENT_S,
    NEVER_S,
    Rig,
    loom_accepts,
    start_rig,
)
from tests.core.proxy.procs import ProxyProcess, wait_for

TOOLS = [{"name": "deploy", "description": "deploy", "input_schema": {"type": "object"}}]
OPERATOR_KEYS = ["ts", "tool", "input", "rule", "id", "action", "via", "by"]


@pytest.fixture(autouse=True)
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "runtime"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(folder))  # ours, loom's CLI and child procs
    return folder


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(1, thread_name_prefix="agent") as p:
        yield p


def shielded(tmp: Path, timeout: float = NEVER_S) -> Rig:
    return start_rig(tmp, shield=ShieldFlags(confirm=["deploy*"], confirm_timeout=timeout))


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    with shielded(tmp_path) as r:
        yield r


def agent_call(
    rig: Rig, pool: ThreadPoolExecutor, stream: bool = False, timeout: float = CLIENT_S
) -> Future[Any]:
    """The agent asks once; the fake model answers with one ``deploy`` call."""
    rig.upstream.script(Reply(text="Deploying.", calls=[("toolu_1", "deploy", {"env": "prod"})]))
    client = anthropic.Anthropic(
        base_url=rig.url, api_key=ANTHROPIC_KEY, max_retries=0, timeout=timeout
    )

    def ask() -> Any:
        kwargs: dict[str, Any] = dict(
            model="fake-1",
            max_tokens=64,
            tools=TOOLS,
            messages=[{"role": "user", "content": "ship it"}],
        )
        if stream:
            with client.messages.stream(**kwargs) as s:
                return s.get_final_message()
        return client.messages.create(**kwargs)

    return pool.submit(ask)


def held(port: int) -> PendingCall:
    return wait_for(lambda: ControlClient(port).pending(), 10, "a held call")[0]


def blocks(message: Any, kind: str) -> list[Any]:
    return [b for b in message.content if b.type == kind]


def test_approve_through_our_client_and_loom_verifies_the_trace(
    rig: Rig, pool: ThreadPoolExecutor
) -> None:
    answer = agent_call(rig, pool)
    call = held(rig.proxy.port)
    token = ControlClient(rig.proxy.port).token or ""
    status, listed = _raw(rig.proxy.port, "GET", "/loom/shield/pending", {"x-loom-token": token})
    assert status == 200 and list(listed["pending"][0]) == ["id", "tool", "input", "rule", "age_s"]
    assert (call.tool, call.input, call.rule, len(call.id)) == (
        "deploy",
        {"env": "prod"},
        "deploy*",
        6,
    )
    assert not answer.done()  # the agent's request is still open
    ControlClient(rig.proxy.port).decide(call.id, True, by="alice")
    message = answer.result(10)
    assert [(b.name, b.input) for b in blocks(message, "tool_use")] == [("deploy", {"env": "prod"})]
    assert ControlClient(rig.proxy.port).pending() == []
    trace = rig.stop()
    [event] = trace["shield_events"]
    assert list(event) == OPERATOR_KEYS
    assert (event["id"], event["action"], event["via"], event["by"]) == (
        call.id,
        "approve",
        "operator",
        "alice",
    )
    loom_accepts(rig.save)


def test_deny_with_a_reason_streamed(rig: Rig, pool: ThreadPoolExecutor) -> None:
    answer = agent_call(rig, pool, stream=True)
    call = held(rig.proxy.port)
    ControlClient(rig.proxy.port).decide(call.id, False, by="bob", reason="prod is frozen")
    message = answer.result(10)
    assert blocks(message, "tool_use") == [] and message.stop_reason == "end_turn"
    text = "".join(b.text for b in blocks(message, "text"))
    assert (
        '[loom shield] Blocked tool call deploy({"env": "prod"}) -- denied by the operator' in text
        and "prod is frozen" in text
    )
    [event] = rig.stop()["shield_events"]
    assert (event["action"], event["via"], event["by"], event["reason"]) == (
        "deny",
        "operator",
        "bob",
        "prod is frozen",
    )


def test_edit_then_approve(rig: Rig, pool: ThreadPoolExecutor) -> None:
    answer = agent_call(rig, pool)
    call = held(rig.proxy.port)
    ControlClient(rig.proxy.port).decide(call.id, True, by="carol", edited_input={"env": "staging"})
    [use] = blocks(answer.result(10), "tool_use")
    assert use.input == {"env": "staging"}
    [event] = rig.stop()["shield_events"]
    assert (event["action"], event["edited_input"]) == ("approve", {"env": "staging"})


def test_timeout_denies(tmp_path: Path, pool: ThreadPoolExecutor) -> None:
    rig = shielded(tmp_path, timeout=0.5)
    try:
        message = agent_call(rig, pool).result(10)
        assert "-- approval timed out." in "".join(b.text for b in blocks(message, "text"))
        [event] = rig.stop()["shield_events"]
        assert (event["action"], event["via"], "by" in event) == ("deny", "timeout", False)
    finally:
        rig.close()


def test_loom_harness_cli_drives_our_proxy(rig: Rig, pool: ThreadPoolExecutor) -> None:
    port = str(rig.proxy.port)
    answer = agent_call(rig, pool)
    call = held(rig.proxy.port)
    listed = loom("approvals", "--port", port)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(
        f'[{call.id}] deploy({{"env": "prod"}})  rule=\'deploy*\'  waiting '
    )
    approved = loom("approve", call.id, "--port", port, "--as", "dave")
    assert (approved.returncode, approved.stdout.strip()) == (0, f"approved [{call.id}]")
    assert blocks(answer.result(10), "tool_use")
    assert loom("approvals", "--port", port).stdout.strip() == "no pending approvals"
    assert rig.stop()["shield_events"][0]["by"] == "dave"


def test_our_cli(rig: Rig, pool: ThreadPoolExecutor) -> None:
    port = str(rig.proxy.port)
    assert core("approvals", "--port", port).stdout.strip() == "no pending approvals"
    answer = agent_call(rig, pool)
    call = held(rig.proxy.port)
    listed = core("approvals", "--port", port)
    assert listed.stdout.startswith(
        f'[{call.id}] deploy({{"env": "prod"}})  rule=\'deploy*\'  waiting '
    ), listed.stdout + listed.stderr
    unknown = core("approve", "nope00", "--port", port)
    assert unknown.returncode == 1 and "no pending approval 'nope00'" in unknown.stderr
    denied = core(
        "approve", call.id, "--deny", "--reason", "not today", "--as", "erin", "--port", port
    )
    assert (denied.returncode, denied.stdout.strip()) == (0, f"denied [{call.id}]")
    assert not blocks(answer.result(10), "tool_use")
    [event] = rig.stop()["shield_events"]
    assert (event["by"], event["reason"]) == ("erin", "not today")
    gone = core("approvals", "--port", port)  # the proxy is stopped
    assert gone.returncode == 2 and "Traceback" not in gone.stderr


def _raw(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_refusals(rig: Rig, tmp_path: Path) -> None:
    port = rig.proxy.port
    wrong = ControlClient(port, token="0" * 32)
    for attempt in (wrong.pending, lambda: wrong.decide("abc123", True)):
        with pytest.raises(ControlError) as err:
            attempt()
        assert (err.value.status, str(err.value)) == (403, "missing or wrong x-loom-token header")
    token = ControlClient(port).token
    assert token and len(token) == 32 and int(token, 16) >= 0
    status, body = _raw(
        port, "GET", "/loom/shield/pending", {"Host": "evil.example:80", "x-loom-token": token}
    )
    assert status == 403
    assert _raw(
        port, "GET", "/loom/shield/pending", {"Host": f"localhost:{port}", "x-loom-token": token}
    ) == (200, {"pending": []})
    status, body = _raw(
        port,
        "POST",
        "/loom/shield/decide",
        {"x-loom-token": token, "content-type": "application/json"},
        json.dumps({"id": "abc123", "decision": "approve"}).encode(),
    )
    assert (status, body) == (404, {"error": "no pending approval 'abc123'"})
    assert [
        loopback_host(h)
        for h in (
            "127.0.0.1:1",
            "[::1]:2",
            "::1",
            "LOCALHOST",
            "127.9.9.9",
            "10.0.0.1:1",
            "attacker.test",
            "localhost.evil",
        )
    ] == [True] * 5 + [False] * 3

    (tmp_path / "bare").mkdir()
    bare = start_rig(tmp_path / "bare")  # no shield: the plane does not exist
    try:
        with pytest.raises(ControlError) as err:
            ControlClient(bare.proxy.port, token=token).pending()
        assert (err.value.status, str(err.value)) == (404, "no shield active on this proxy")
        assert bare.proxy.ready["token_file"] is None
    finally:
        bare.close()


def test_client_disconnect_removes_the_approval(rig: Rig) -> None:
    rig.upstream.script(Reply(text="Deploying.", calls=[("toolu_1", "deploy", {"env": "prod"})]))
    with HangingUpAgent(rig.url) as agent:
        held(rig.proxy.port)
        agent.hang_up()
        wait_for(lambda: ControlClient(rig.proxy.port).pending() == [], 10, "the approval to go")
    assert rig.proxy.session is not None
    assert rig.proxy.session.exchanges == 0  # nothing of the abandoned exchange is recorded


def test_token_file_lifecycle(tmp_path: Path, runtime: Path) -> None:
    with ProxyProcess(
        tmp_path,
        "--target",
        "http://127.0.0.1:9",
        "--save",
        str(tmp_path / "p.loom.json"),
        "--confirm",
        "deploy*",
    ) as proc:
        token_file = Path(proc.ready["token_file"])
        assert token_file == runtime / f"{proc.ready['port']}.token"
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        assert len(token_file.read_text()) == 32
        assert ControlClient(int(proc.ready["port"])).pending() == []
        assert proc.stop() == 0
        assert not token_file.exists()
