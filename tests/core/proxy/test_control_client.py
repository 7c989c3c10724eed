"""Our control client drives loom-harness's real ``loom proxy --confirm``: list, approve, deny."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from loom_core.proxy.control_client import ControlClient, ControlError, read_token
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import CLIENT_S, NEVER_S, LoopThread

LOOM = Path(sys.executable).with_name("loom")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(predicate: Any, seconds: float = 15.0) -> Any:
    deadline = time.monotonic() + seconds
    for _ in range(2000):
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            break
        time.sleep(0.02)
    raise AssertionError("timed out")


@pytest.fixture
def loom_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[int, FakeUpstream, LoopThread]]:
    """loom-harness's proxy with a confirm rule in front of a fake upstream."""
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(tmp_path / "rt"))
    lt = LoopThread()
    upstream = FakeUpstream()
    url = lt.run(upstream.start())
    port = _free_port()
    env = {**os.environ, "LOOM_RUNTIME_DIR": str(tmp_path / "rt")}
    proc = subprocess.Popen(
        [
            str(LOOM),
            "proxy",
            "--port",
            str(port),
            "--target",
            url,
            "--save",
            str(tmp_path / "s.loom.json"),
            "--confirm",
            "deploy*",
            "--confirm-timeout",
            str(NEVER_S),  # the tests decide each call: no timeout may race them
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait(lambda: read_token(port))
        yield port, upstream, lt
    finally:
        proc.kill()
        proc.wait(10)
        lt.run(upstream.stop())
        lt.close()


def _ask(port: int, out: list[Any]) -> threading.Thread:
    client = anthropic.Anthropic(
        base_url=f"http://127.0.0.1:{port}", api_key="sk-ant-test", max_retries=0, timeout=CLIENT_S
    )

    def run() -> None:
        out.append(
            client.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=100,
                messages=[{"role": "user", "content": "ship it"}],
            )
        )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("approve", [True, False])
def test_list_and_decide_a_held_call(
    loom_proxy: tuple[int, FakeUpstream, LoopThread], approve: bool
) -> None:
    port, upstream, _lt = loom_proxy
    upstream.script(Reply(text="ok", calls=[("t1", "deploy", {"env": "prod"})]))
    client = ControlClient(port)
    out: list[Any] = []
    thread = _ask(port, out)
    held = _wait(lambda: client.pending())
    assert (
        held[0].tool == "deploy" and held[0].input == {"env": "prod"} and held[0].rule == "deploy*"
    )
    client.decide(held[0].id, approve, reason="checked")
    thread.join(20)
    blocks = [b.type for b in out[0].content]
    assert ("tool_use" in blocks) is approve
    assert client.pending() == []
    with pytest.raises(ControlError) as err:
        client.decide(held[0].id, True)
    assert err.value.status == 404


def test_wrong_token_is_refused(loom_proxy: tuple[int, FakeUpstream, LoopThread]) -> None:
    port, _upstream, _lt = loom_proxy
    with pytest.raises(ControlError) as err:
        ControlClient(port, token="0" * 32).pending()
    assert err.value.status == 403


def test_no_proxy_is_a_clear_error() -> None:
    with pytest.raises(ControlError) as err:
        ControlClient(_free_port(), token="x", timeout=1).pending()
    assert err.value.status == 0 and "no proxy answering" in str(err.value)
