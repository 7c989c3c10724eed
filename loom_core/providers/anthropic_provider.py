"""Anthropic Messages API through the official ``anthropic`` SDK.

Streaming uses the SDK's ``messages.stream`` helper, which assembles the final
message (split tool-input JSON included) exactly as a non-streamed call returns
it, so both modes yield the same :class:`ModelReply`; between events the cancel
token is checked and leaving the ``with`` block closes the connection.
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2

from loom_core.providers.base import CancelToken, ModelReply, ModelRequest
from loom_core.providers.billing import anthropic_extras
from loom_core.providers.convert import anthropic_messages, anthropic_tools
from loom_core.providers.names import DEFAULT_MODELS
from loom_core.providers.retry import CallFailed, SdkProvider, classify


class AnthropicProvider(SdkProvider[anthropic.Anthropic]):
    """``complete`` blocks: run it in a worker. Key: ``ANTHROPIC_API_KEY``;
    base URL: the constructor or ``ANTHROPIC_BASE_URL``."""

    name = "anthropic"
    key_var = "ANTHROPIC_API_KEY"
    url_var = "ANTHROPIC_BASE_URL"
    default_model = DEFAULT_MODELS["anthropic"]

    def client(self) -> anthropic.Anthropic:
        """One SDK client per provider (it pools connections); SDK retries off."""
        if self._client is None:
            self._client = anthropic.Anthropic(
                api_key=self.endpoint.key,
                base_url=self.endpoint.base_url,
                max_retries=0,
                timeout=self.policy.timeout,
            )
        return self._client

    def _params(self, request: ModelRequest, model: str) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens,
            "messages": anthropic_messages(request.messages),
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = anthropic_tools(request.tools)
        # this SDK's signature has no sampling parameters; the API still takes them
        sampling = {
            k: v
            for k, v in (("temperature", request.temperature), ("top_p", request.top_p))
            if v is not None
        }
        if sampling:
            params["extra_body"] = sampling
        return params

    def _create(self, params: dict[str, Any], cancel: CancelToken) -> ModelReply:
        message = self.client().messages.create(**params)
        cancel.check()
        return reply_of(message)

    def _stream(self, params: dict[str, Any], cancel: CancelToken) -> ModelReply:
        with self.client().messages.stream(**params) as stream:
            for _event in stream:
                cancel.check()
            return reply_of(stream.get_final_message())

    def _classify(self, exc: BaseException) -> CallFailed | None:
        return classify(exc, anthropic, (httpx2.TransportError,))


def reply_of(message: Any) -> ModelReply:
    """An SDK ``Message`` as a loom model result: text blocks joined, tool_use blocks
    as calls, ``stop_reason`` "tool_use" iff there are calls (as the proxy derives it)."""
    text = "".join(b.text for b in message.content if b.type == "text")
    calls = [
        {"id": b.id, "name": b.name, "input": b.input if isinstance(b.input, dict) else {}}
        for b in message.content
        if b.type == "tool_use"
    ]
    usage = message.usage
    return ModelReply(
        text=text,
        tool_calls=calls,
        stop_reason="tool_use" if calls else "end_turn",
        usage={
            "input_tokens": int(usage.input_tokens or 0),
            "output_tokens": int(usage.output_tokens or 0),
            **anthropic_extras(usage),
        },
        model=str(message.model or ""),
    )
