"""A fake model API on a background loop, and providers pointed at it.

Why the real SDK providers against :mod:`tests.core.proxy.fake_upstream`: the
conversions only matter if the official clients accept what we build and the
bytes a real API would send come back as the right :class:`ModelReply`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from loom_core.providers import make_provider
from loom_core.providers.base import ModelReply, ModelRequest, ToolSpec
from tests.core.proxy.fake_upstream import FakeUpstream, Seen
from tests.core.proxy.harness import ANTHROPIC_KEY, OPENAI_KEY, LoopThread

DIALECTS = ("anthropic", "openai", "openai-responses")
PATHS = {
    "anthropic": "/v1/messages",
    "openai": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
}
KEYS = {"anthropic": ANTHROPIC_KEY, "openai": OPENAI_KEY, "openai-responses": OPENAI_KEY}
ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)


class Upstream:
    """The fake API on its own loop thread; :meth:`close` stops both (bounded)."""

    def __init__(self) -> None:
        self.lt = LoopThread()
        self.fake = FakeUpstream()
        self.providers: list[Any] = []
        try:
            self.lt.run(self.fake.start())
        except BaseException:
            self.lt.close()
            raise

    def base_url(self, name: str) -> str:
        return self.fake.url if name == "anthropic" else self.fake.url + "/v1"

    def provider(self, name: str, **opts: Any) -> Any:
        """A provider of ``name`` aimed here with a fake key and fast back-off."""
        opts = {"api_key": KEYS[name], "backoff": 0.01, "timeout": 10.0, **opts}
        return self.own(make_provider(name, "fake-model", self.base_url(name), **opts))

    def own(self, provider: Any) -> Any:
        """Close ``provider`` (its pooled connections) when this upstream closes."""
        self.providers.append(provider)
        return provider

    @property
    def seen(self) -> list[Seen]:
        return self.fake.seen

    def close(self) -> None:
        for provider in self.providers:
            provider.close()
        try:
            self.lt.run(self.fake.stop())
            self.lt.run(_cancel_leftovers())  # e.g. a handler still stalling for a timeout test
        finally:
            self.lt.close()


async def _cancel_leftovers() -> None:
    """Cancel and await every other task on the loop, so none is destroyed pending."""
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def request(**overrides: Any) -> ModelRequest:
    base: dict[str, Any] = {
        "system": "You are a travel agent.",
        "messages": [{"role": "user", "content": "Book a hotel in Zürich"}],
        "tools": [
            ToolSpec(
                "search_hotels",
                "Find hotels",
                {"type": "object", "properties": {"city": {"type": "string"}}},
            )
        ],
    }
    return ModelRequest(**{**base, **overrides})


class Worker:
    """``provider.complete`` on a thread, so a test can cancel it from outside."""

    def __init__(self, call: Callable[[], ModelReply]) -> None:
        self.outcome: ModelReply | BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call: Callable[[], ModelReply]) -> None:
        try:
            self.outcome = call()
        except BaseException as exc:  # handed to the test
            self.outcome = exc

    def join(self, timeout: float = 10.0) -> ModelReply | BaseException | None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "provider call did not return after cancel"
        return self.outcome


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll ``condition`` (bounded); fail the test if it never holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)
