"""What keeps a recorded exchange's CPU near a bare pass-through's (issue 24).

Only behaviour is checked here, never a time: how fast it is belongs to
``benchmarks/proxy_cpu.py`` and ``benchmarks/proxy_overhead.py``.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from loom_core.proxy import server as server_module
from loom_core.proxy.rawreq import RawRequest
from loom_core.proxy.reconstruct import StreamReconstructor
from loom_core.proxy.session import YOUNG_GC, RecordingSession
from loom_core.proxy.sidecar import read_sidecar
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import CLIENT_S, LoopThread, Rig, start_rig

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def gc_threshold() -> Iterator[tuple[int, ...]]:
    """The process's collector thresholds, restored after the test."""
    saved = gc.get_threshold()
    gc.set_threshold(700, *saved[1:])
    try:
        yield gc.get_threshold()
    finally:
        gc.set_threshold(*saved)


def test_a_dedicated_proxy_collects_the_young_generation_less_often(
    tmp_path: Path, gc_threshold: tuple[int, ...]
) -> None:
    RecordingSession(tmp_path / "a.loom.json").abandon()  # in the desktop: leave it alone
    assert gc.get_threshold() == gc_threshold
    RecordingSession(tmp_path / "b.loom.json", freeze_gc=True).abandon()
    assert gc.get_threshold() == (YOUNG_GC, *gc_threshold[1:])


def test_a_request_is_decoded_once_it_is_on_its_way_upstream(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body is decoded while the upstream works, not before it is sent: at every
    decode the exchange's upstream wait has begun (the watchdog watches it)."""
    watches: list[int] = []
    dog = rig.proxy.server.watchdog

    class Watched(RawRequest):
        @classmethod
        def parse(cls, body: bytes) -> RawRequest | None:
            watches.append(len(dog._watches))
            return RawRequest.parse(body)

    monkeypatch.setattr(server_module, "RawRequest", Watched)
    rig.upstream.script(Reply(text="one"), Reply(text="two"))
    client = rig.anthropic()
    client.messages.create(model="m", max_tokens=5, messages=HI)
    with client.messages.stream(model="m", max_tokens=5, messages=HI) as stream:
        assert "".join(stream.text_stream) == "two"
    assert watches == [1, 1]
    exchanges = read_sidecar(rig.tmp / "session.exchanges.jsonl").exchanges
    assert [x.response["content"][0]["text"] for x in exchanges] == ["one", "two"]


@pytest.mark.parametrize("body", [b"[1, 2]", b"not json", b'"text"'])
def test_a_body_that_is_not_a_json_object_is_forwarded_as_is_and_not_recorded(
    tmp_path: Path, body: bytes
) -> None:
    """It is found out only once it is sent (above): the answer is still relayed whole,
    byte for byte, with its status, and nothing is recorded."""
    received: list[bytes] = []
    answer = b'{"type": "message", "content": [{"type": "text", "text": "hi"}]}'

    async def model(request: web.Request) -> web.Response:
        received.append(await request.read())
        return web.Response(body=answer, status=201, content_type="application/json")

    async def start() -> web.AppRunner:
        app = web.Application()
        app.router.add_post("/v1/messages", model)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return runner

    lt = LoopThread()
    runner = lt.run(start())
    try:
        target = f"http://127.0.0.1:{runner.addresses[0][1]}"
        with start_rig(tmp_path, target=target) as rig:
            reply = httpx.post(rig.url + "/v1/messages", content=body, timeout=CLIENT_S)
            assert (reply.status_code, reply.content) == (201, answer)
            assert received == [body]
            assert rig.proxy.session is not None and rig.proxy.session.exchanges == 0
            assert read_sidecar(rig.tmp / "session.exchanges.jsonl").exchanges == []
    finally:
        lt.run(runner.cleanup())
        lt.close()


def test_a_delta_found_ahead_is_found_again_when_its_conversation_moved_on(
    tmp_path: Path,
) -> None:
    """Two calls of one conversation in flight: the second's delta, found while both
    waited, names no base; the first is recorded meanwhile, so the second is stored
    against it, as if found at its record."""
    first = {"model": "m", "messages": HI}
    second = {"model": "m", "messages": [*HI, {"role": "assistant", "content": "one"}]}
    answer = {"type": "message", "content": [{"type": "text", "text": "x"}]}
    session = RecordingSession(tmp_path / "c.loom.json")
    try:
        one, two = RawRequest.of(first), RawRequest.of(second)
        ahead = session.delta("/v1/messages", two)
        assert ahead is not None and ahead.base is None
        early = session.delta("/v1/messages", one)
        assert session.record("/v1/messages", "anthropic", one, answer, [], 1.0, None, early)
        assert session.record("/v1/messages", "anthropic", two, answer, [], 1.0, None, ahead)
    finally:
        session.abandon()
    lines = (tmp_path / "c.exchanges.jsonl").read_text().splitlines()
    stored = [json.loads(line)["request"] for line in lines[1:]]
    assert [(r["base"], r["keep"]) for r in stored] == [(None, 0), (0, 1)]
    assert [x.request for x in read_sidecar(tmp_path / "c.exchanges.jsonl").exchanges] == [
        first,
        second,
    ]


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


def test_a_long_stream_is_folded_as_it_flows_not_all_at_its_end() -> None:
    """Its last event is held until the record is written, so what is still unparsed
    then delays that client's end and everyone's next first byte: by the last event
    of a 200-delta answer, at most about 4 KB are left (every 4 KB is folded as it
    comes), and the result is the same as folding it all at the end."""
    message = {"id": "m", "type": "message", "role": "assistant", "model": "x", "content": []}
    words = [f"word{i} " for i in range(200)]
    events = [
        _event("message_start", {"message": {**message, "usage": {"input_tokens": 3}}}),
        _event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        *(
            _event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": w}})
            for w in words
        ),
        _event("content_block_stop", {"index": 0}),
        _event(
            "message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}
        ),
    ]
    end = _event("message_stop", {})
    flowing = StreamReconstructor("/v1/messages")
    for chunk in events:
        assert not flowing.add(chunk)  # no final event among them: each is sent at once
    assert flowing.acc is not None and len(flowing._buf) <= 4096 + len(events[-1])
    assert flowing.add(end) and flowing.parse() == sum(map(len, events))
    at_once = StreamReconstructor("/v1/messages")
    assert at_once.add(b"".join([*events, end])) and at_once.parse() == flowing.terminal_at
    assert flowing.result() == at_once.result()
    assert flowing.result()["content"][0]["text"] == "".join(words)


def test_no_exchange_summary_is_built_while_nobody_subscribes(tmp_path: Path) -> None:
    """The event stream's listener says whether anyone listens: when nobody does, a
    recorded exchange's summary is not built (it is on the way to the client)."""
    heard: list[str] = []

    class Feed:
        wanted = False

        def __call__(self, summary: dict[str, Any]) -> None:
            heard.append(f"feed {summary['n']}")

    feed = Feed()
    session = RecordingSession(tmp_path / "e.loom.json")
    session.listeners.append(feed)
    answer = {"type": "message", "content": [{"type": "text", "text": "x"}]}
    try:
        assert session.record("/v1/messages", "anthropic", {"messages": HI}, answer, [], 1.0)
        feed.wanted = True
        assert session.record("/v1/messages", "anthropic", {"messages": HI}, answer, [], 1.0)
        session.listeners.append(lambda summary: heard.append(f"plain {summary['n']}"))
        feed.wanted = False
        assert session.record("/v1/messages", "anthropic", {"messages": HI}, answer, [], 1.0)
    finally:
        session.abandon()
    assert heard == ["feed 1", "plain 2"]
