"""``--upstream-timeout`` through the watchdog (one check for every in-flight read).

Decided: a wait for the upstream is cut off once no byte came for the timeout --
never before it, and at most two check periods after (1.25x for this timeout) --
whether the upstream stalls before its head (504) or mid-stream (a torn stream);
a stream whose every gap is shorter than the timeout is never cut off however long
it lasts; time in which our client has not taken what we sent does not count.
The bounds below leave the machine a second of slack and are far below the
upstream's own stall, so a pass cannot come from the upstream finishing.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import anthropic
import pytest

from loom_core.proxy.watchdog import Watch, Watchdog
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import start_rig
from tests.core.proxy.test_failures import HI, only_the_good_one

TIMEOUT = 1.0
SLACK = 1.0  # scheduling on a loaded machine; the upstreams below stall for 6 s


def test_stall_before_the_answer_is_504_after_the_timeout(tmp_path: Path) -> None:
    with start_rig(tmp_path, upstream_timeout=TIMEOUT) as rig:
        rig.upstream.script(Reply(text="late", stall=6.0), Reply(text="fine"))
        client = rig.anthropic()
        t0 = time.monotonic()
        with pytest.raises(anthropic.APIStatusError) as err:
            client.messages.create(model="m", max_tokens=5, messages=HI)
        waited = time.monotonic() - t0
        assert err.value.status_code == 504 and "timed out after 1s" in str(err.value.body)
        assert TIMEOUT <= waited < TIMEOUT * 1.25 + SLACK, waited
        client.messages.create(model="m", max_tokens=5, messages=HI)
        only_the_good_one(rig)


def test_stall_mid_stream_is_cut_off_after_the_timeout(tmp_path: Path) -> None:
    with start_rig(tmp_path, upstream_timeout=TIMEOUT) as rig:
        rig.upstream.script(Reply(text="a stream that stops", pace=6.0), Reply(text="fine"))
        client = rig.anthropic()
        seen: list[float] = []
        with pytest.raises(Exception) as err:
            with client.messages.stream(model="m", max_tokens=5, messages=HI) as s:
                for _event in s:
                    seen.append(time.monotonic())
        gap = time.monotonic() - seen[-1]
        assert not isinstance(err.value, AssertionError)
        assert len(seen) == 1  # message_start, then the upstream went quiet
        assert TIMEOUT * 0.9 <= gap < TIMEOUT * 1.25 + SLACK, gap  # 0.9: relay latency
        client.messages.create(model="m", max_tokens=5, messages=HI)
        only_the_good_one(rig)


def test_gaps_shorter_than_the_timeout_never_cut_a_long_stream(tmp_path: Path) -> None:
    with start_rig(tmp_path, upstream_timeout=TIMEOUT) as rig:
        rig.upstream.script(Reply(text="slow but steady", pace=0.3))
        client = rig.anthropic()
        t0 = time.monotonic()
        with client.messages.stream(model="m", max_tokens=5, messages=HI) as s:
            text = s.get_final_text()
        assert text == "slow but steady"
        assert time.monotonic() - t0 > TIMEOUT * 1.5  # longer in all than the timeout
        only_the_good_one(rig, "slow but steady")


class _Content:
    """An upstream body that never grows (the only parts the watchdog reads)."""

    total_bytes = 10

    def __init__(self) -> None:
        self.error: BaseException | None = None

    def is_eof(self) -> bool:
        return False

    def set_exception(self, exc: BaseException) -> None:
        self.error = exc


class _Client:
    """Our client's transport; ``unsent`` bytes it has not taken yet."""

    unsent = 1

    def get_write_buffer_size(self) -> int:
        return self.unsent


def test_a_client_not_keeping_up_pauses_the_clock() -> None:
    async def scenario() -> tuple[Any, float]:
        dog = Watchdog(0.1)
        client, content = _Client(), _Content()
        response: Any = type("Response", (), {"content": content})()
        with dog.watching(client) as watch:  # type: ignore[arg-type]
            dog.begin(watch, response, None)
            await asyncio.sleep(0.5)  # five timeouts, all while the client is behind
            assert content.error is None
            client.unsent = 0
            t0 = time.monotonic()
            for _ in range(200):  # bounded: 2 s at most
                if content.error is not None:
                    break
                await asyncio.sleep(0.01)
            dog.close()
            return content.error, time.monotonic() - t0

    error, after = asyncio.run(scenario())
    assert isinstance(error, TimeoutError)
    assert 0.1 - 0.0125 <= after < 0.1 * 1.25 + SLACK, after  # 0.0125: one check period


def test_watch_is_forgotten_when_the_block_ends() -> None:
    async def scenario() -> tuple[int, int]:
        dog = Watchdog(5.0)
        response: Any = type("Response", (), {"content": None})()
        with dog.watching(None) as watch:
            dog.begin(watch, response, None)
            inside = len(dog._watches)
        assert isinstance(watch, Watch) and watch.response is None
        outside = len(dog._watches)
        dog.close()
        return inside, outside

    assert asyncio.run(scenario()) == (1, 0)
