"""A live call's cache and reasoning counts survive into the branch's usage (and its cost).

The SDKs' own response types are built from wire-shaped JSON, as the clients do.
"""

from __future__ import annotations

import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion
from openai.types.responses.response_usage import ResponseUsage

from loom_core.providers.anthropic_provider import reply_of
from loom_core.providers.openai_provider import _usage
from loom_core.views.pricing import call_cost
from loom_core.views.run_cost import token_usage


def test_anthropic_cache_counts_are_kept_and_priced() -> None:
    message = Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 1000,
                "output_tokens": 200,
                "cache_creation_input_tokens": 2000,
                "cache_read_input_tokens": 10000,
            },
        }
    )
    usage = reply_of(message).usage
    assert usage == {
        "input_tokens": 1000,
        "output_tokens": 200,
        "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 10000,
    }
    assert call_cost("claude-sonnet-4-5", token_usage(usage)) == pytest.approx(0.0165)


def test_openai_cached_and_reasoning_counts_are_kept() -> None:
    chat = ChatCompletion.model_validate(
        {
            "id": "c1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "hi"},
                }
            ],
            "usage": {
                "prompt_tokens": 5000,
                "completion_tokens": 300,
                "total_tokens": 5300,
                "prompt_tokens_details": {"cached_tokens": 4000},
                "completion_tokens_details": {"reasoning_tokens": 100},
            },
        }
    )
    usage = _usage(chat.usage, "prompt_tokens", "completion_tokens")
    assert usage == {
        "input_tokens": 5000,
        "output_tokens": 300,
        "input_tokens_details": {"cached_tokens": 4000},
        "output_tokens_details": {"reasoning_tokens": 100},
    }
    assert call_cost("gpt-4o", token_usage(usage)) == pytest.approx(0.0105)
    plain = ResponseUsage.model_validate(
        {
            "input_tokens": 10,
            "output_tokens": 2,
            "total_tokens": 12,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
    )
    assert _usage(plain, "input_tokens", "output_tokens") == {
        "input_tokens": 10,
        "output_tokens": 2,
    }
