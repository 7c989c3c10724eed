"""``--replay``: the recorded responses served back to the real SDKs, zero upstream calls.

Each dialect is recorded in one transport and replayed in the other, so both the
JSON path and the synthesized SSE of every dialect (§6.8, plus the Responses API)
are met by a real client.
"""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from tests.core.proxy.checks import anthropic_seen
from tests.core.proxy.harness import Rig, start_rig
from tests.core.proxy.test_sdk_anthropic import agent, script
from tests.core.proxy.test_sdk_openai import chat_agent, responses_agent, two_turns


def record_all(tmp: Path, stream: bool) -> tuple[Path, dict[str, list]]:  # type: ignore[type-arg]
    rig = start_rig(tmp / "rec")
    try:
        script(rig)
        seen = {"anthropic": [anthropic_seen(m) for m in agent(rig, stream)]}
        two_turns(rig)
        seen["chat"] = chat_agent(rig, stream)
        two_turns(rig)
        seen["responses"] = responses_agent(rig, stream)
        rig.stop()
        return rig.save, seen
    finally:
        rig.close()


@pytest.mark.parametrize("recorded_stream", [False, True], ids=["json-to-sse", "sse-to-json"])
def test_replay_serves_the_same_responses_offline(tmp_path: Path, recorded_stream: bool) -> None:
    (tmp_path / "rec").mkdir()
    (tmp_path / "play").mkdir()
    trace, recorded = record_all(tmp_path, recorded_stream)
    rig: Rig = start_rig(tmp_path / "play", replay=str(trace))
    try:
        replayed = not recorded_stream
        assert [anthropic_seen(m) for m in agent(rig, replayed)] == recorded["anthropic"]
        assert chat_agent(rig, replayed) == recorded["chat"]
        assert responses_agent(rig, replayed) == recorded["responses"]
        assert rig.upstream.seen == []  # zero upstream calls
        assert rig.proxy.server.replay is not None and rig.proxy.server.replay.remaining == 0

        async def after() -> tuple[int, str, int]:
            async with aiohttp.ClientSession() as s:
                async with s.post(rig.url + "/v1/messages", json={"model": "m"}) as r:
                    exhausted, text = r.status, await r.text()
                async with s.get(rig.url + "/v1/models") as r:
                    return exhausted, text, r.status

        status, text, get_status = rig.lt.run(after())
        assert status == 410 and "replay exhausted" in text and get_status == 404
        assert not list((tmp_path / "play").glob("*.jsonl"))  # replay records nothing
    finally:
        rig.close()
