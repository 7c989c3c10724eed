"""Persist before answer, shown with a real ``kill -9`` at every point of an exchange.

The proxy is a real process started with ``LOOM_PROXY_CRASH_AT=POINT@2``
(:mod:`loom_core.proxy.faults`): it sends itself ``SIGKILL`` when the second exchange
reaches POINT, so every point is hit every time, not by timing luck. The first
exchange (non-streamed) completes before. Afterwards, whatever the client of the second exchange
holds, every exchange it received in full is in the journal and the exchange
sidecar, and in the trace the next start recovers -- and an exchange is never
answered before it is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import pytest
from loom.journal import Journal

from loom_core.proxy.config import SessionPaths
from loom_core.proxy.faults import ENV, POINTS
from loom_core.proxy.recovery import recover_previous
from loom_core.proxy.sidecar import read_sidecar
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import ANTHROPIC_KEY, running_upstream
from tests.core.proxy.procs import ProxyProcess, wait_for

HI = [{"role": "user", "content": "hi"}]
# points the exchange passes before anything of it is written / before it is answered
UNWRITTEN = ("request", "upstream", "relayed", "record")
UNANSWERED = (*UNWRITTEN, "sidecar", "journal")
CASES = [
    (kind, p) for kind in ("json", "stream") for p in POINTS if (kind, p) != ("json", "relayed")
]


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream() as fake:
        yield fake


def ask(client: anthropic.Anthropic, stream: bool) -> str | None:
    """One exchange; its text if the client received the whole answer, else None."""
    try:
        if not stream:
            block = client.messages.create(model="m", max_tokens=5, messages=HI).content[0]
            return block.text  # type: ignore[union-attr]
        with client.messages.stream(model="m", max_tokens=5, messages=HI) as s:
            return "".join(s.text_stream)
    except (anthropic.APIError, httpx.HTTPError):
        return None


def on_disk(save: Path) -> dict[str, list[str]]:
    """The model texts each place holds: the journal (read by loom-harness), the sidecar
    and the trace the next start recovers from it."""
    paths = SessionPaths.of(save)
    recovered = recover_previous(paths)  # what the next start does, to the same files
    assert recovered is not None
    trace = json.loads(recovered.read_text())
    _, effects, _ = Journal.read_full(str(paths.journal))
    return {
        "journal": [e.result["text"] for e in effects if e.kind == "model"],
        "sidecar": [
            x.response["content"][0]["text"] for x in read_sidecar(paths.exchanges).exchanges
        ],
        "recovered": [e["result"]["text"] for e in trace["log"] if e["kind"] == "model"],
    }


@pytest.mark.parametrize(("kind", "point"), CASES, ids=[f"{k}-{p}" for k, p in CASES])
def test_a_kill_at_any_point_loses_no_answer_a_client_received(
    tmp_path: Path, upstream: FakeUpstream, kind: str, point: str
) -> None:
    stream = kind == "stream"
    # "relayed": the second stream's first event comes alone (the rest a minute later),
    # so the proxy relays it before anything else exists to read
    upstream.script(Reply(text="one"), Reply(text="two", pace=60.0 if point == "relayed" else 0))
    save = tmp_path / "crash.loom.json"
    flags = ("--target", upstream.url, "--save", str(save))
    nth = 1 if point == "relayed" else 2  # a non-streamed exchange relays no stream
    with ProxyProcess(tmp_path, *flags, env={ENV: f"{point}@{nth}"}) as proc:
        client = anthropic.Anthropic(
            base_url=proc.url, api_key=ANTHROPIC_KEY, max_retries=0, timeout=10.0
        )
        assert ask(client, stream=False) == "one"
        got = ask(client, stream)
        assert wait_for(lambda: proc.proc.poll() is not None, what="the crash") and (
            proc.proc.returncode == -9
        ), proc.err.read_text()
    disk = on_disk(save)
    if got is not None:
        assert got == "two"
        assert disk == dict.fromkeys(disk, ["one", "two"]), point  # received, so written
    assert point not in UNANSWERED or got is None, f"answered before written ({point})"
    written = ["one"] if point in UNWRITTEN else ["one", "two"]
    assert disk["sidecar"] == disk["recovered"] == written
    assert disk["journal"] == (["one"] if point in (*UNWRITTEN, "sidecar") else ["one", "two"])
