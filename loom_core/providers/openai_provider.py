"""OpenAI Chat Completions and Responses API through the official ``openai`` SDK.

Both work against any OpenAI-compatible server (vLLM, Ollama, LM Studio) through
``base_url``; such servers often want no key, so with a base URL and no key the SDK
gets a placeholder. Streaming reads the raw event stream and checks the cancel
token between events; the Chat stream is assembled here (tool calls arrive by
index, usage in a last chunk), the Responses stream carries its final response in
``response.completed`` -- both end in the same :class:`ModelReply` a non-streamed
call gives.
"""

from __future__ import annotations

from typing import Any

import httpx2
import openai

from loom_core.providers.base import CancelToken, ModelReply, ModelRequest
from loom_core.providers.billing import openai_extras
from loom_core.providers.convert import (
    chat_messages,
    chat_tools,
    decode_arguments,
    responses_input,
    responses_tools,
)
from loom_core.providers.names import DEFAULT_MODELS
from loom_core.providers.retry import RETRY_ERROR_TYPES, CallFailed, SdkProvider, classify


class _OpenAIBase(SdkProvider[openai.OpenAI]):
    key_var = "OPENAI_API_KEY"
    url_var = "OPENAI_BASE_URL"

    def client(self) -> openai.OpenAI:
        """One SDK client per provider (it pools connections); SDK retries off."""
        if self._client is None:
            self._client = openai.OpenAI(
                api_key=self.endpoint.key,
                base_url=self.endpoint.base_url,
                max_retries=0,
                timeout=self.policy.timeout,
            )
        return self._client

    def _classify(self, exc: BaseException) -> CallFailed | None:
        return classify(exc, openai, (httpx2.TransportError,))


def _sampling(request: ModelRequest) -> dict[str, Any]:
    return {
        k: v
        for k, v in (("temperature", request.temperature), ("top_p", request.top_p))
        if v is not None
    }


def _usage(usage: Any, inp: str, out: str) -> dict[str, Any]:
    """Token counts under loom's names (§1.4), plus what is billed at its own rate
    (:mod:`.billing`); a server that reports none gives zeros."""
    if usage is None:
        return {"input_tokens": 0, "output_tokens": 0}
    return {
        "input_tokens": int(getattr(usage, inp, 0) or 0),
        "output_tokens": int(getattr(usage, out, 0) or 0),
        **openai_extras(usage, chat=inp == "prompt_tokens"),
    }


def _reply(text: str, calls: list[dict[str, Any]], usage: dict[str, Any], model: str) -> ModelReply:
    return ModelReply(
        text=text,
        tool_calls=calls,
        stop_reason="tool_use" if calls else "end_turn",
        usage=usage,
        model=model,
    )


# -- Chat Completions -----------------------------------------------------------------


class OpenAIChatProvider(_OpenAIBase):
    """Chat Completions. ``token_param`` names the length limit: OpenAI itself wants
    ``max_completion_tokens`` (its reasoning models reject ``max_tokens``), while
    compatible servers best understand ``max_tokens`` -- the default follows base_url."""

    name = "openai"
    default_model = DEFAULT_MODELS["openai"]

    def __init__(
        self,
        model: str = "",
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        token_param: str | None = None,
        **policy: Any,
    ) -> None:
        super().__init__(model, base_url, api_key, **policy)
        self.token_param = token_param or (
            "max_tokens" if self.endpoint.base_url else "max_completion_tokens"
        )

    def _params(self, request: ModelRequest, model: str) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": model,
            "messages": chat_messages(request.system, request.messages),
            self.token_param: request.max_tokens,
            **_sampling(request),
        }
        if request.tools:
            params["tools"] = chat_tools(request.tools)
        return params

    def _create(self, params: dict[str, Any], cancel: CancelToken) -> ModelReply:
        done = self.client().chat.completions.create(**params)
        cancel.check()
        message = done.choices[0].message if done.choices else None
        calls = [
            _call(c.id, c.function.name, c.function.arguments)
            for c in (message.tool_calls or [] if message else [])
            if c.type == "function"
        ]
        return _reply(
            (message.content or "") if message else "",
            calls,
            _usage(done.usage, "prompt_tokens", "completion_tokens"),
            done.model or "",
        )

    def _stream(self, params: dict[str, Any], cancel: CancelToken) -> ModelReply:
        acc = _ChatAssembly()
        with self.client().chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}
        ) as stream:
            for chunk in stream:
                cancel.check()
                acc.add(chunk)
        return acc.reply()


def _call(call_id: str | None, name: str | None, arguments: str | None) -> dict[str, Any]:
    return {"id": call_id or "", "name": name or "", "input": decode_arguments(arguments)}


class _ChatAssembly:
    """A streamed chat completion put back together: text deltas joined, tool calls
    gathered by ``index`` (id and name come once, arguments in pieces)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, list[str]] = {}  # index -> [id, name, arguments]
        self.usage: Any = None
        self.model = ""

    def add(self, chunk: Any) -> None:
        self.model = chunk.model or self.model
        self.usage = chunk.usage or self.usage
        for choice in chunk.choices[:1] if chunk.choices else []:
            self.text.append(choice.delta.content or "")
            for tc in choice.delta.tool_calls or []:
                slot = self.calls.setdefault(tc.index, ["", "", ""])
                slot[0] = tc.id or slot[0]
                if tc.function is not None:
                    slot[1] = tc.function.name or slot[1]
                    slot[2] += tc.function.arguments or ""

    def reply(self) -> ModelReply:
        calls = [_call(*self.calls[i]) for i in sorted(self.calls)]
        return _reply(
            "".join(self.text),
            calls,
            _usage(self.usage, "prompt_tokens", "completion_tokens"),
            self.model,
        )


# -- Responses ------------------------------------------------------------------------


class OpenAIResponsesProvider(_OpenAIBase):
    """The Responses API: ``instructions`` = system prompt, the Item list as ``input``."""

    name = "openai-responses"
    default_model = DEFAULT_MODELS["openai-responses"]

    def _params(self, request: ModelRequest, model: str) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": model,
            "input": responses_input(request.messages),
            "max_output_tokens": request.max_tokens,
            **_sampling(request),
        }
        if request.system:
            params["instructions"] = request.system
        if request.tools:
            params["tools"] = responses_tools(request.tools)
        return params

    def _create(self, params: dict[str, Any], cancel: CancelToken) -> ModelReply:
        response = self.client().responses.create(**params)
        cancel.check()
        return responses_reply(response)

    def _stream(self, params: dict[str, Any], cancel: CancelToken) -> ModelReply:
        final = None
        with self.client().responses.create(**params, stream=True) as stream:
            for event in stream:
                cancel.check()
                if event.type in ("response.completed", "response.incomplete", "response.failed"):
                    final = event.response
                    break
                if event.type == "error":
                    raise CallFailed(
                        f"stream error {event.code or '?'}: {event.message}",
                        event.code in RETRY_ERROR_TYPES,
                    )
        if final is None:
            raise CallFailed("the stream ended before its response was complete", True)
        return responses_reply(final)


def responses_reply(response: Any) -> ModelReply:
    """Output items -> text (``output_text`` parts joined) and calls (``function_call``
    items keyed by ``call_id``); a failed response is a classified failure."""
    if response.status == "failed":
        err = response.error
        code = (err.code if err else "") or "?"
        raise CallFailed(
            f"response failed {code}: {err.message if err else ''}", code in RETRY_ERROR_TYPES
        )
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in response.output or []:
        if item.type == "message":
            text += [part.text for part in item.content if part.type == "output_text"]
        elif item.type == "function_call":
            calls.append(_call(item.call_id, item.name, item.arguments))
    return _reply(
        "".join(text),
        calls,
        _usage(response.usage, "input_tokens", "output_tokens"),
        response.model or "",
    )
