"""The offline ScriptedProvider: scripts, a responder, the default answer, cancel, failures."""

from __future__ import annotations

import pytest

from loom_core.providers.base import Cancelled, CancelToken, ModelReply, ModelRequest, ProviderError
from loom_core.providers.scripted import ScriptedProvider, failing


def req(*texts: str) -> ModelRequest:
    return ModelRequest("sys", [{"role": "user", "content": t} for t in texts], model="m")


def test_script_then_responder_then_nothing_left() -> None:
    seen = []
    p = ScriptedProvider(
        [
            ModelReply("one", [], "end_turn", {"input_tokens": 1, "output_tokens": 2}),
            {"text": "two", "tool_calls": [{"name": "f", "input": {"a": 1}}]},
        ],
        responder=lambda r: seen.append(r) or {"text": f"saw {len(r.messages)}"},
    )
    first, second = p.complete(req("a")), p.complete(req("a", "b"))
    assert (first.text, first.usage) == ("one", {"input_tokens": 1, "output_tokens": 2})
    assert second.tool_calls == [{"id": "call_2_0", "name": "f", "input": {"a": 1}}]
    assert second.stop_reason == "tool_use" and second.usage["input_tokens"] > 0
    assert p.complete(req("a", "b", "c")).text == "saw 3" and len(seen) == 1
    assert [len(r.messages) for r in p.requests] == [1, 2, 3]


def test_defaults_and_availability() -> None:
    p = ScriptedProvider()
    assert p.name == "scripted" and p.available() == (True, "")
    reply = p.complete(req("hello"))
    assert reply.text == "scripted reply" and reply.stop_reason == "end_turn"
    assert reply.model == "m"


def test_requests_are_copies() -> None:
    p = ScriptedProvider()
    request = req("a")
    p.complete(request)
    request.messages.append({"role": "user", "content": "later"})
    assert len(p.requests[0].messages) == 1


def test_cancel_before_and_during_a_call() -> None:
    token = CancelToken()
    token.cancel()
    p = ScriptedProvider()
    with pytest.raises(Cancelled):
        p.complete(req("a"), token)
    assert p.requests == []  # nothing was "sent"
    during = CancelToken()
    p2 = ScriptedProvider(responder=lambda r: during.cancel() or {"text": "late"})
    with pytest.raises(Cancelled):
        p2.complete(req("a"), during)


def test_scripted_failure_is_raised() -> None:
    p = ScriptedProvider([failing("rate limited")])
    with pytest.raises(ProviderError, match="rate limited"):
        p.complete(req("a"))
