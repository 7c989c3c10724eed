"""The shield hook contract (:mod:`loom_core.proxy.hooks`), met by a stand-in screen.

Why a stand-in: the shield engine is built separately; these tests pin down what
the proxy promises it -- observation before forwarding, screening before persisting
and replying, screened streams re-synthesized, events stored with their exchange,
and cancellation when the client gives up on a held call.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from loom_core.proxy.hooks import Exchange, Screen, Screened
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.hangup import HangingUpAgent
from tests.core.proxy.harness import loom_accepts, start_rig
from tests.core.proxy.procs import wait_for

NOTICE = "[loom shield] Blocked tool call delete_city"


class StandInScreen:
    """Denies ``delete_city``; flags a taint when a tool result holds ``sk-``; can hold."""

    def __init__(self, hold: bool = False) -> None:
        self.hold = hold
        self.observed: list[str] = []
        self.holding = self.cancelled = False

    def observe_request(self, exchange: Exchange) -> list[dict[str, Any]]:
        self.observed.append(exchange.path)
        text = json.dumps(exchange.request.get("messages"))
        return (
            [{"ts": 1.0, "action": "tainted", "via": "sequence", "rule": "taint sk-*: confirm *"}]
            if "tool_result" in text and "sk-" in text
            else []
        )

    async def screen_response(self, exchange: Exchange, response: dict[str, Any]) -> Screened:
        if self.hold:
            self.holding = True
            try:
                await asyncio.Event().wait()  # an approval that never comes
            except asyncio.CancelledError:
                self.cancelled = True
                raise
        content, events = [], []
        for block in response.get("content") or []:
            if block.get("type") == "tool_use" and block["name"] == "delete_city":
                content.append({"type": "text", "text": NOTICE})
                events.append(
                    {
                        "ts": 2.0,
                        "tool": "delete_city",
                        "input": block["input"],
                        "rule": "delete_*",
                        "action": "deny",
                        "via": "rule",
                    }
                )
            else:
                content.append(block)
        if not events:
            return Screened(response)
        calls = any(b.get("type") == "tool_use" for b in content)
        screened = {
            **response,
            "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
        }
        return Screened(screened, events, changed=True)


def test_stand_in_meets_the_protocol() -> None:
    assert isinstance(StandInScreen(), Screen)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_screen_decides_what_is_sent_and_stored(tmp_path: Path, stream: bool) -> None:
    screen = StandInScreen()
    rig = start_rig(tmp_path, screen=screen)
    try:
        rig.upstream.script(
            Reply(text="Reading. ", calls=[("t1", "read_env", {})]),
            Reply(text="Done. ", calls=[("t2", "delete_city", {"city": "Paris"})]),
        )
        client = rig.anthropic()
        history: list[dict[str, Any]] = [{"role": "user", "content": "clean up"}]
        messages = []
        for _ in range(2):
            if stream:
                with client.messages.stream(model="m", max_tokens=9, messages=history) as s:
                    message = s.get_final_message()
            else:
                message = client.messages.create(model="m", max_tokens=9, messages=history)
            messages.append(message)
            history += [
                {
                    "role": "assistant",
                    "content": [b.model_dump(exclude_none=True) for b in message.content],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "KEY=sk-abc"}
                    ],
                },
            ]
        assert [b.type for b in messages[1].content] == ["text", "text"]
        assert messages[1].content[1].text == NOTICE and messages[1].stop_reason == "end_turn"
        trace = rig.stop()
        assert screen.observed == ["/v1/messages", "/v1/messages"]
        assert [e["action"] for e in trace["shield_events"]] == ["tainted", "deny"]
        assert trace["log"][-1]["result"]["text"] == "Done. " + NOTICE
        assert trace["wire"][1]["content"][1] == {"type": "text", "text": NOTICE}
        loom_accepts(rig.save)
    finally:
        rig.close()


def test_a_held_call_is_cancelled_when_the_client_gives_up(tmp_path: Path) -> None:
    screen = StandInScreen(hold=True)
    rig = start_rig(tmp_path, screen=screen)
    try:
        rig.upstream.script(Reply(text="never shown"))
        with HangingUpAgent(rig.url) as agent:
            wait_for(lambda: screen.holding, 10, "the screening to hold the answer")
            agent.hang_up()
            wait_for(lambda: screen.cancelled, 10, "the held screening to be cancelled")
        assert rig.proxy.session is not None and rig.proxy.session.exchanges == 0
    finally:
        rig.close()
