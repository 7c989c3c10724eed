"""What every model provider takes and returns, independent of the wire dialect.

Why one neutral shape: a fork re-runs a recorded context against whichever
provider the user picks (Anthropic, OpenAI Chat, OpenAI Responses, any
OpenAI-compatible server, or the offline scripted one), and the branch records
the reply as a loom ``model`` effect (loom-format.md §1.4) whatever the dialect.
The context is loom-harness's Item list (the ``edit`` effect's result, §1.3):
``{role, content, source, pinned, tokens, tool_calls: [{id, name, input}],
tool_call_id, name}`` with role ``user`` | ``assistant`` | ``tool``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol


class ProviderError(Exception):
    """A call that failed for good (after retries): names the provider and the cause."""


class Cancelled(Exception):
    """The caller cancelled while a call was in flight or waiting to retry."""


@dataclass
class ToolSpec:
    """A tool offered to the model. ``schema`` is a JSON schema for its input."""

    name: str
    description: str = ""
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass
class ModelRequest:
    """One model call: system prompt, Item list, tools, model id and sampling parameters."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[ToolSpec] = field(default_factory=list)
    model: str = ""
    max_tokens: int = 1024
    temperature: float | None = None
    top_p: float | None = None


@dataclass
class ModelReply:
    """A model's answer in the shape of a loom ``model`` effect result (§1.4)."""

    text: str
    tool_calls: list[dict[str, Any]]  # [{id, name, input}]
    stop_reason: str  # "tool_use" iff tool_calls, else "end_turn"
    usage: dict[str, Any]  # {input_tokens, output_tokens} + billing details (.billing)
    model: str = ""

    def result(self) -> dict[str, Any]:
        """The ``model`` effect result: exactly text, tool_calls, stop_reason, usage."""
        return {
            "text": self.text,
            "tool_calls": self.tool_calls,
            "stop_reason": self.stop_reason,
            "usage": self.usage,
        }


class CancelToken:
    """Shared flag a worker checks between (and during) calls; cheap to pass around."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True when cancelled meanwhile (used for retry back-off)."""
        return self._event.wait(seconds)

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled("cancelled")


class Provider(Protocol):
    """A model endpoint. ``complete`` blocks (run it in a worker), retries, honours ``cancel``."""

    name: str  # "anthropic" | "openai" | "openai-responses" | "scripted"

    def complete(self, request: ModelRequest, cancel: CancelToken | None = None) -> ModelReply: ...

    def available(self) -> tuple[bool, str]:
        """(usable?, why not) — e.g. the API key variable is missing."""
        ...
