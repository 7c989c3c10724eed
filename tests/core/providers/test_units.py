"""The pure parts: Item conversions, argument decoding, back-off, the registry."""

from __future__ import annotations

import email.utils
import json
import time

import openai
import pytest
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import Response

from loom_core.providers import PROVIDERS, default_model, make_provider
from loom_core.providers.base import ProviderError
from loom_core.providers.convert import (
    anthropic_messages,
    as_text,
    chat_messages,
    decode_arguments,
    responses_input,
)
from loom_core.providers.openai_provider import _ChatAssembly, responses_reply
from loom_core.providers.retry import CallFailed, CallPolicy, classify, retry_after
from tests.core.proxy import fake_wire as fw


def test_as_text_keeps_non_strings_as_json() -> None:
    assert as_text("x") == "x" and as_text(None) == ""
    assert as_text({"n": 27, "city": "Zürich"}) == '{"n": 27, "city": "Zürich"}'
    assert as_text(27) == "27"


def test_decode_arguments() -> None:
    assert decode_arguments('{"a": 1}') == {"a": 1}
    assert decode_arguments("{not json") == {}
    assert decode_arguments("[1, 2]") == {}
    assert decode_arguments("") == {} and decode_arguments(None) == {}


def test_anthropic_merges_same_roles_and_drops_empty_text() -> None:
    items = [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": ""},  # nothing to send: dropped
        {"role": "user", "content": "c"},
        {
            "role": "assistant",
            "content": "ok",
            "tool_calls": [{"id": "t1", "name": "f", "input": "not a dict"}],
        },
        {"role": "user", "content": "note first"},
        {"role": "tool", "content": 42, "tool_call_id": "t1"},
    ]
    assert anthropic_messages(items) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a"},
                {"type": "text", "text": "b"},
                {"type": "text", "text": "c"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "ok"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "42"},
                {"type": "text", "text": "note first"},
            ],
        },
    ]


def test_unknown_role_names_the_item() -> None:
    items = [{"role": "user", "content": "a"}, {"role": "system", "content": "b"}]
    for convert in (anthropic_messages, responses_input, lambda i: chat_messages("", i)):
        with pytest.raises(ProviderError, match=r"context item 1: unknown role 'system'"):
            convert(items)


def test_chat_without_system_and_plain_assistant() -> None:
    assert chat_messages("", [{"role": "assistant", "content": None}]) == [
        {"role": "assistant", "content": ""}
    ]


def test_chat_stream_assembly_with_undecodable_arguments() -> None:
    acc = _ChatAssembly()
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    for delta in (
        {"content": "Hi"},
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "k",
                    "type": "function",
                    "function": {"name": "f", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": "{broken"}}]},
    ):
        acc.add(
            ChatCompletionChunk.model_validate(
                {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            )
        )
    reply = acc.reply()
    assert reply.tool_calls == [{"id": "k", "name": "f", "input": {}}]
    assert reply.text == "Hi" and reply.stop_reason == "tool_use"
    assert reply.usage == {"input_tokens": 0, "output_tokens": 0}  # the server sent none


def test_responses_reply_and_failed_response() -> None:
    body = fw.responses_json(fw.Reply(text="t", calls=[("c1", "f", {"a": 1})]), 0, "m")
    body["output"][1]["arguments"] = "{oops"
    reply = responses_reply(Response.construct(**body))
    assert reply.tool_calls == [{"id": "c1", "name": "f", "input": {}}] and reply.text == "t"
    body.update(status="failed", error={"code": "server_error", "message": "boom"})
    with pytest.raises(CallFailed) as failed:
        responses_reply(Response.construct(**body))
    assert failed.value.retryable and "boom" in failed.value.message


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None and retry_after(None) is None
    later = email.utils.formatdate(time.time() + 120, usegmt=True)
    assert 100 < (retry_after({"retry-after": later}) or 0) <= 121


def test_delay_doubles_with_jitter_and_is_capped() -> None:
    policy = CallPolicy(backoff=1.0, max_backoff=5.0)
    for retry, top in ((0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (9, 5.0)):
        assert top / 2 <= policy.delay(retry, None) <= top
    assert policy.delay(0, 100.0) == 5.0 and policy.delay(0, -3.0) == 0.0


def test_openai_in_stream_error_event_is_classified() -> None:
    import httpx2

    req = httpx2.Request("POST", "http://127.0.0.1/v1/responses")
    busy = openai.APIError("busy", req, body={"type": "server_error", "message": "busy"})
    bad = openai.APIError("bad", req, body={"code": "invalid_prompt", "message": "no"})
    assert (classify(busy, openai) or CallFailed("", False)).retryable
    assert not (classify(bad, openai) or CallFailed("", True)).retryable
    assert classify(KeyError("bug"), openai) is None  # bugs are not swallowed


def test_registry() -> None:
    assert list(PROVIDERS) == ["anthropic", "openai", "openai-responses", "scripted"]
    assert all(PROVIDERS.values())
    assert default_model("anthropic").startswith("claude")
    assert default_model("openai").startswith("gpt")
    with pytest.raises(ValueError, match="unknown provider 'gemini'"):
        make_provider("gemini")
    with pytest.raises(ValueError):
        default_model("gemini")
    assert make_provider("openai-responses").name == "openai-responses"


def test_scripted_is_built_lazily() -> None:
    pytest.importorskip("loom_core.providers.scripted")
    provider = make_provider("scripted")
    assert provider.name == "scripted" and provider.available()[0]


def test_importing_the_registry_loads_no_sdk() -> None:
    """The picker and the fork's edit types import this package; the SDKs stay unloaded."""
    import subprocess
    import sys

    code = (
        "import sys, loom_core.providers as p; p.default_model('openai'); "
        "print(json.dumps(sorted(m for m in ('anthropic', 'openai') if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json; " + code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout) == []
