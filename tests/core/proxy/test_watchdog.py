"""``--upstream-timeout`` through the watchdog (one check for every in-flight read).

Decided: a wait for the upstream is cut off once no byte came for the timeout --
never before it, and at most two check periods after (1.25x for timeouts up to 8 s) --
whether the upstream stalls before its head (504) or mid-stream (a torn stream);
a stream whose every gap is shorter than the timeout is never cut off however long
it lasts; time in which our client has not taken what we sent does not count.

No assertion here depends on the machine's speed or load (CI shares two cores). Through
the real proxy, the stalled upstreams never answer on their own and only "never before
the timeout" is measured (load can only make a cut-off later); the proxy's timeout is
many times any gap of the exchanges meant to pass. "At most two check periods after"
is checked on the watchdog itself, against a loop clock the test moves by hand.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anthropic
import pytest

from loom_core.proxy.watchdog import Watch, Watchdog
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import start_rig
from tests.core.proxy.test_failures import HI, only_the_good_one

TIMEOUT = 2.0  # over six times the steady stream's gaps below
NEVER = math.inf  # an upstream that never answers (or never goes on) by itself


def test_stall_before_the_answer_is_504_after_the_timeout(tmp_path: Path) -> None:
    with start_rig(tmp_path, upstream_timeout=TIMEOUT) as rig:
        rig.upstream.script(Reply(text="late", stall=NEVER), Reply(text="fine"))
        client = rig.anthropic()
        t0 = time.monotonic()
        with pytest.raises(anthropic.APIStatusError) as err:
            client.messages.create(model="m", max_tokens=5, messages=HI)
        waited = time.monotonic() - t0
        assert err.value.status_code == 504 and "timed out after 2s" in str(err.value.body)
        assert waited >= TIMEOUT, waited  # never before the timeout
        client.messages.create(model="m", max_tokens=5, messages=HI)
        only_the_good_one(rig)


def test_stall_mid_stream_is_cut_off_after_the_timeout(tmp_path: Path) -> None:
    with start_rig(tmp_path, upstream_timeout=TIMEOUT) as rig:
        rig.upstream.script(Reply(text="a stream that stops", pace=NEVER), Reply(text="fine"))
        client = rig.anthropic()
        seen: list[float] = []
        with pytest.raises(Exception) as err:
            with client.messages.stream(model="m", max_tokens=5, messages=HI) as s:
                for _event in s:
                    seen.append(time.monotonic())
        gap = time.monotonic() - seen[-1]
        assert not isinstance(err.value, AssertionError)
        assert len(seen) == 1  # message_start, then the upstream went quiet
        assert gap >= TIMEOUT * 0.9, gap  # never before the timeout (0.9: relay latency)
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
        assert time.monotonic() - t0 > TIMEOUT  # longer in all than the timeout
        only_the_good_one(rig, "slow but steady")


class _Content:
    """An upstream body that grows only when told (the only parts the watchdog reads)."""

    def __init__(self) -> None:
        self.total_bytes = 10
        self.error: BaseException | None = None

    def is_eof(self) -> bool:
        return False

    def set_exception(self, exc: BaseException) -> None:
        self.error = exc


class _Client:
    """Our client's transport; ``unsent`` bytes it has not taken yet."""

    unsent = 0

    def get_write_buffer_size(self) -> int:
        return self.unsent


class HandClock:
    """The running loop's clock, moved only by the test: the watchdog's periodic check
    fires as the clock passes its time, whatever the machine is doing meanwhile."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.now = 1000.0
        loop.time = lambda: self.now  # type: ignore[method-assign]

    async def advance_until(self, done: Callable[[], bool], limit: float) -> float:
        """Move the clock a millisecond at a time (every timer due runs) until ``done``;
        the time it took."""
        start = self.now
        while not done() and self.now - start < limit:
            self.now = round(self.now + 0.001, 6)
            for _ in range(3):  # the due check runs within these turns of the loop
                await asyncio.sleep(0)
        return self.now - start


Scenario = Callable[[HandClock, _Content], Awaitable[float]]


def run_watched(timeout: float, scenario: Scenario, client: _Client | None = None) -> float:
    """``scenario(clock, content)`` with one wait watched from the start, on a hand clock."""

    async def main() -> float:
        clock = HandClock(asyncio.get_running_loop())
        dog, content = Watchdog(timeout), _Content()
        response: Any = type("Response", (), {"content": content})()
        try:
            with dog.watching(client) as watch:  # type: ignore[arg-type]
                dog.begin(watch, response, None)
                return await scenario(clock, content)
        finally:
            dog.close()

    return asyncio.run(main())


def test_a_wait_is_cut_off_after_the_timeout_since_the_last_byte_within_two_periods() -> None:
    async def scenario(clock: HandClock, content: _Content) -> float:
        await clock.advance_until(lambda: False, 0.7)
        content.total_bytes += 1  # a byte, between two checks
        return await clock.advance_until(lambda: content.error is not None, 10)

    after = run_watched(1.0, scenario)  # a check every 0.125 s
    assert 1.0 <= after <= 1.0 + 2 * 0.125, after


def test_a_client_not_keeping_up_pauses_the_clock() -> None:
    client = _Client()
    client.unsent = 1

    async def scenario(clock: HandClock, content: _Content) -> float:
        await clock.advance_until(lambda: False, 0.5)  # five timeouts, the client behind
        assert content.error is None
        client.unsent = 0
        return await clock.advance_until(lambda: content.error is not None, 10)

    after = run_watched(0.1, scenario, client)  # a check every 0.0125 s
    assert 0.1 - 0.0125 <= after <= 0.1 + 2 * 0.0125, after


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
