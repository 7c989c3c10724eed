"""A stopped proxy says which signal stopped it and who sent it; held calls get an answer.

Why: an offline demo's proxy stopped before its held call timed out, its agent got
"Server disconnected without sending a response", and nothing on disk said who had
stopped the proxy. Real processes, real signals, the real ``anthropic`` SDK as agent.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anthropic
import pytest

from loom_core.proxy.control_client import ControlClient
from loom_core.proxy.sidecar import read_sidecar
from loom_core.proxy.stop_signals import StopCause, StopSignals
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, CLIENT_S, running_upstream
from tests.core.proxy.procs import ProxyProcess, wait_for

TOOLS = [{"name": "deploy", "description": "deploy", "input_schema": {"type": "object"}}]
posix_only = pytest.mark.skipif(not hasattr(signal, "sigtimedwait"), reason="no siginfo here")


@pytest.fixture(autouse=True)
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "runtime"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(folder))  # the proxy child's token file
    return folder


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream() as fake:
        yield fake


@posix_only
@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"]
)
def test_the_end_record_names_the_signal_and_its_sender(
    tmp_path: Path, upstream: FakeUpstream, sig: signal.Signals
) -> None:
    save = tmp_path / "s.loom.json"
    with ProxyProcess(
        tmp_path, "--target", upstream.url, "--save", str(save), ignore_sigint=True
    ) as proc:
        assert proc.stop(sig) == 0  # also SIGHUP: a clean stop, the trace finalized
    end = read_sidecar(tmp_path / "s.exchanges.jsonl").end
    assert end is not None and end["exchanges"] == 0
    stopped_by = end["stopped_by"]
    assert stopped_by["signal"] == sig.name
    assert stopped_by["pid"] == os.getpid() and stopped_by["uid"] == os.getuid()
    assert "pytest" in stopped_by["command"] or sys.executable in stopped_by["command"]
    err = proc.err.read_text()
    assert f"loom proxy: stopped by {sig.name} from pid {os.getpid()} (" in err
    assert not proc.ready_file.exists()


@posix_only
def test_a_held_call_is_denied_with_a_reason_when_the_proxy_stops(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    """The agent gets an answer ("the proxy was stopped"), not a dropped connection."""
    save = tmp_path / "held.loom.json"
    flags = ("--target", upstream.url, "--save", str(save), "--confirm", "deploy*")
    upstream.script(Reply(text="Deploying.", calls=[("toolu_1", "deploy", {"env": "prod"})]))
    with ProxyProcess(tmp_path, *flags) as proc, ThreadPoolExecutor(1) as pool:
        client = anthropic.Anthropic(
            base_url=proc.url, api_key=ANTHROPIC_KEY, max_retries=0, timeout=CLIENT_S
        )
        answer = pool.submit(
            client.messages.create,
            model="fake-1",
            max_tokens=64,
            tools=TOOLS,  # type: ignore[arg-type]
            messages=[{"role": "user", "content": "ship it"}],
        )
        control = ControlClient(int(proc.ready["port"]))
        wait_for(control.pending, what="the held deploy call")
        assert proc.stop(signal.SIGTERM) == 0
        reply = answer.result(timeout=30)
    texts = [b.text for b in reply.content if b.type == "text"]
    assert not [b for b in reply.content if b.type == "tool_use"]
    assert any("denied by the operator (reason: the proxy was stopped)" in t for t in texts)
    sidecar = read_sidecar(tmp_path / "held.exchanges.jsonl")
    [exchange] = sidecar.exchanges  # the exchange is recorded, with its decision
    [event] = [e for e in exchange.shield_events if e.get("action") == "deny"]
    assert event["reason"] == "the proxy was stopped" and event["by"] == "loom proxy"
    assert sidecar.end is not None and sidecar.end["stopped_by"]["signal"] == "SIGTERM"


def test_a_cause_reads_as_a_sentence() -> None:
    assert StopCause("SIGTERM", 42, 1000, "loom-desktop").describe() == (
        "SIGTERM from pid 42 (loom-desktop)"
    )
    assert "kernel" in StopCause("SIGINT", 0, 0).describe()
    assert StopCause("SIGINT").record() == {"signal": "SIGINT"}


@posix_only
def test_close_restores_the_mask_and_handlers() -> None:
    """The waiter leaves the process as it found it (tests run it in-process)."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    handler = signal.getsignal(signal.SIGTERM)
    signals = StopSignals()
    signals.install()
    assert signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    signals.close()
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
    assert signal.getsignal(signal.SIGTERM) is handler
