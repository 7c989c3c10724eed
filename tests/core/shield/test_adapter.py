"""``build_screen``: the shield behind the proxy's hook contract (observe, async screen).

Why: the proxy only knows that contract; these checks pin the behaviour it
relies on -- no shield without flags, taint before forwarding, waiting on an
operator without polling, timeouts, and cancellation when the client leaves.
"""

from __future__ import annotations

import asyncio
import types
from typing import Any

import pytest

from loom_core.proxy.config import ShieldFlags
from loom_core.shield import build_screen


def flags(**kw: Any) -> ShieldFlags:
    return ShieldFlags(**kw)


def exchange(request: dict[str, Any]) -> Any:
    return types.SimpleNamespace(
        path="/v1/messages", request=request, dialect="anthropic", stream=False
    )


RESPONSE = {
    "content": [
        {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "make deploy"}}
    ],
    "stop_reason": "tool_use",
}


def test_no_flags_no_screen_and_last_profile_wins() -> None:
    assert build_screen(flags()) is None
    screen = build_screen(flags(profiles=["ci-safe", "k8s-safe"]))
    assert screen is not None and screen.shield.config.profile == "k8s-safe"
    assert "--profile given 2 times" in screen.warnings[-1]


def test_taint_then_operator_approval() -> None:
    screen = build_screen(flags(confirm=["Bash*"], rules=["taint sk-*: deny WebFetch*"]))
    assert screen is not None
    request = {"messages": [{"role": "tool", "content": "token sk-123"}]}
    assert screen.observe_request(exchange(request))[0]["action"] == "tainted"

    async def main() -> Any:
        task = asyncio.ensure_future(screen.screen_response(exchange({}), RESPONSE))
        while not screen.approvals.pending():
            await asyncio.sleep(0)
        screen.approvals.decide(screen.approvals.pending()[0]["id"], "approve", by="ann")
        return await task

    screened = asyncio.run(main())
    assert screened.response is RESPONSE and not screened.changed
    assert [(e["action"], e["via"], e["by"]) for e in screened.events] == [
        ("approve", "operator", "ann")
    ]


def test_timeout_and_cancellation() -> None:
    screen = build_screen(flags(confirm=["Bash*"], confirm_timeout=0))
    assert screen is not None
    screened = asyncio.run(screen.screen_response(exchange({}), RESPONSE))
    assert screened.changed and screened.events[0]["via"] == "timeout"
    screen = build_screen(flags(confirm=["Bash*"]))
    assert screen is not None

    async def main() -> None:
        task = asyncio.ensure_future(screen.screen_response(exchange({}), RESPONSE))
        while not screen.approvals.pending():
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert screen.approvals.pending() == []
