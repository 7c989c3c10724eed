"""Failures on either side: relayed faithfully, never recorded, never corrupting the rest.

Decisions under test: an upstream HTTP error reaches the client with its status,
headers and body and is not recorded (as in loom-harness); a torn stream (upstream
dropped or stalled) reaches the client as an error and is not recorded; a client
that hangs up mid-stream gets nothing recorded and the upstream call is closed. In
every case the next exchange is recorded normally, as exchange 0.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import aiohttp
import anthropic
import httpx2
import openai
import pytest

from loom_core.formats.canonical import proxy_model_key
from tests.core.proxy.fake_upstream import api_error
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import Rig, loom_accepts, start_rig

HI = [{"role": "user", "content": "hi"}]


def only_the_good_one(rig: Rig, text: str = "fine") -> None:
    """The session holds exactly one exchange, the one that succeeded after the failure."""
    trace = rig.stop()
    assert [e["key"] for e in trace["log"]] == [proxy_model_key(0)]
    assert trace["output"] == text and len(trace["wire"]) == 1
    loom_accepts(rig.save)


# What a client sees of a torn stream: its SDK's error, or (older releases) its HTTP
# transport's. Which of the two an SDK release raises is its own business (anthropic
# 2.17 began wrapping the transport's), so the test asks only that the call failed.
CLIENT_ERRORS = (anthropic.APIError, httpx2.HTTPError)


def assert_torn(client: anthropic.Anthropic) -> None:
    """Consuming a stream the proxy tore ends in an error, never in a final message."""
    with pytest.raises(CLIENT_ERRORS):
        with client.messages.stream(model="m", max_tokens=5, messages=HI) as s:
            for _event in s:
                pass
            s.get_final_message()


def wait_until(predicate, seconds: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_errors_keep_status_headers_and_body(rig: Rig, stream: bool) -> None:
    rig.upstream.script(
        api_error(429, "rate_limit_error", "slow down"),
        api_error(529, "overloaded_error", "busy"),
        Reply(text="fine"),
    )
    client = rig.anthropic()
    with pytest.raises(anthropic.RateLimitError) as err:
        client.messages.create(model="m", max_tokens=5, messages=HI, stream=stream)
    assert err.value.status_code == 429 and err.value.response.headers["x-fake-error"] == "yes"
    assert err.value.body["error"]["message"] == "slow down"  # type: ignore[index]
    with pytest.raises(anthropic.APIStatusError) as err5:
        client.messages.create(model="m", max_tokens=5, messages=HI, stream=stream)
    assert err5.value.status_code == 529
    client.messages.create(model="m", max_tokens=5, messages=HI)
    only_the_good_one(rig)


def test_openai_server_error_is_relayed(rig: Rig) -> None:
    rig.upstream.script(api_error(500, "server_error", "boom"), Reply(text="fine"))
    client = rig.openai()
    with pytest.raises(openai.InternalServerError) as err:
        client.chat.completions.create(model="m", messages=HI)
    assert err.value.status_code == 500
    client.chat.completions.create(model="m", messages=HI)
    only_the_good_one(rig)


def test_upstream_dropping_mid_stream_is_an_error_and_not_recorded(rig: Rig) -> None:
    rig.upstream.script(
        Reply(text="a long answer that never ends", drop_after=4), Reply(text="fine")
    )
    client = rig.anthropic()
    received = []
    with pytest.raises(Exception) as err:  # the SDK's transport error for a torn body
        with client.messages.stream(model="m", max_tokens=5, messages=HI) as s:
            for event in s:
                received.append(event.type)
    assert "message_stop" not in received and received[:1] == ["message_start"]
    assert not isinstance(err.value, AssertionError)
    client.messages.create(model="m", max_tokens=5, messages=HI)
    only_the_good_one(rig)


def test_client_hanging_up_mid_stream_records_nothing(rig: Rig) -> None:
    rig.upstream.script(Reply(text="x" * 60, pace=0.05), Reply(text="fine"))
    client = rig.anthropic()
    with client.messages.stream(model="m", max_tokens=5, messages=HI) as s:
        for i, _event in enumerate(s):
            if i == 2:
                break  # leaving the block closes the connection mid-stream
    wait_until(lambda: rig.upstream.hung_up == 1)  # the proxy closed the upstream call
    assert rig.upstream.finished_streams == 0
    client.messages.create(model="m", max_tokens=5, messages=HI)
    only_the_good_one(rig)


def test_upstream_unreachable_is_502(tmp_path: Path) -> None:
    rig = start_rig(tmp_path, target="http://127.0.0.1:9")  # discard port: nothing listens
    try:
        with pytest.raises(anthropic.InternalServerError) as err:
            rig.anthropic().messages.create(model="m", max_tokens=5, messages=HI)
        assert err.value.status_code == 502
        assert "cannot reach upstream http://127.0.0.1:9" in str(err.value.body)
        rig.lt.run(rig.proxy.close())
        assert not rig.save.exists()  # nothing recorded, no trace written
    finally:
        rig.close()


def test_upstream_timeouts(tmp_path: Path) -> None:
    """Before the answer: 504. Mid-stream (no bytes for too long): a torn stream.

    The stalled upstreams never go on by themselves, and the timeout is far above what the
    good exchange needs on a loaded machine (it was 0.4 s, which the good one exceeded)."""
    rig = start_rig(tmp_path, upstream_timeout=2.0)
    try:
        rig.upstream.script(
            Reply(text="late", stall=math.inf),
            Reply(text="slow", pace=math.inf),
            Reply(text="fine"),
        )
        client = rig.anthropic()
        with pytest.raises(anthropic.APIStatusError) as err:
            client.messages.create(model="m", max_tokens=5, messages=HI)
        assert err.value.status_code == 504 and "timed out" in str(err.value.body)
        assert_torn(client)
        client.messages.create(model="m", max_tokens=5, messages=HI)
        only_the_good_one(rig)
    finally:
        rig.close()


def test_body_cap_is_413(tmp_path: Path) -> None:
    rig = start_rig(tmp_path, max_body_mb=0.001)  # 1048 bytes
    try:
        big = [{"role": "user", "content": "x" * 5000}]
        with pytest.raises(anthropic.APIStatusError) as err:
            rig.anthropic().messages.create(model="m", max_tokens=5, messages=big)
        assert err.value.status_code == 413
        assert "exceeds the proxy cap (1048); raise it with --max-body-mb" in str(err.value.body)

        async def chunked() -> tuple[int, str]:  # no content-length: the cap still holds
            async def body():  # type: ignore[no-untyped-def]
                yield b'{"model": "m", "messages": ['
                yield b'"' + b"y" * 4000 + b'"]}'

            async with aiohttp.ClientSession() as s:
                async with s.post(rig.url + "/v1/messages", data=body()) as r:
                    return r.status, await r.text()

        status, text = rig.lt.run(chunked())
        assert status == 413 and "exceeds the proxy cap" in text
        assert rig.upstream.seen == []
    finally:
        rig.close()
