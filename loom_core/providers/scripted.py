"""An offline provider that answers from a script: for tests, the demo and dry rehearsals.

Why one of our own (and not loom-harness's): a fork must be exercisable without a
network or an API key -- the re-run loop, pausing on an unseen tool call, budgets and
cancellation all need a model whose answers are known in advance or computed from
what it was sent. It speaks the neutral :mod:`.base` types like the SDK providers,
so the code under test is exactly the code a real fork runs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from loom_core.providers.base import CancelToken, ModelReply, ModelRequest, ProviderError

DEFAULT_TEXT = "scripted reply"
Responder = Callable[[ModelRequest], "ModelReply | dict[str, Any]"]


def _estimate(text: str) -> int:
    """~4 characters per token, at least 1: the same rough rule loom-harness uses."""
    return max(1, len(text) // 4)


def request_tokens(request: ModelRequest) -> int:
    """A deterministic input-token estimate for a request (system + every message)."""
    parts = [request.system] + [str(m.get("content") or "") for m in request.messages]
    return sum(_estimate(p) for p in parts if p)


def as_reply(value: ModelReply | dict[str, Any], request: ModelRequest, n: int) -> ModelReply:
    """Coerce a scripted answer to a :class:`ModelReply`.

    Dicts may omit ``stop_reason`` (derived from the calls), ``usage`` (estimated from
    the request and the text) and call ids (``call_<m>_<k>``, ``m`` = the number of
    messages sent: unique within one growing conversation), so scripts stay short.
    """
    if isinstance(value, ModelReply):
        return copy.deepcopy(value)
    if not isinstance(value, dict):
        raise TypeError(f"scripted reply {n}: expected a ModelReply or dict, got {type(value)}")
    text = str(value.get("text") or "")
    calls = []
    for k, call in enumerate(value.get("tool_calls") or []):
        args = call.get("input")
        call_id = str(call.get("id") or f"call_{len(request.messages)}_{k}")
        calls.append(
            {
                "id": call_id,
                "name": str(call["name"]),
                "input": copy.deepcopy(args) if isinstance(args, dict) else {},
            }
        )
    usage = value.get("usage") or {
        "input_tokens": request_tokens(request),
        "output_tokens": _estimate(text),
    }
    return ModelReply(
        text=text,
        tool_calls=calls,
        stop_reason=str(value.get("stop_reason") or ("tool_use" if calls else "end_turn")),
        usage=dict(usage),
        model=str(value.get("model") or request.model),
    )


class ScriptedProvider:
    """Answers each call with the next scripted reply, else asks ``responder``, else a fixed text.

    A scripted entry that is an exception instance is raised instead of answered
    (how tests make a provider fail mid-run). Every request is kept in ``requests``.
    """

    name = "scripted"

    def __init__(
        self,
        replies: Iterable[ModelReply | dict[str, Any] | BaseException] = (),
        responder: Responder | None = None,
        model: str = "scripted",
        text: str = DEFAULT_TEXT,
    ) -> None:
        self.replies: list[Any] = list(replies)
        self.responder = responder
        self.model = model
        self.text = text
        self.requests: list[ModelRequest] = []

    def available(self) -> tuple[bool, str]:
        """Always usable: no key, no network."""
        return True, ""

    def complete(self, request: ModelRequest, cancel: CancelToken | None = None) -> ModelReply:
        """The next answer; raises :class:`Cancelled` if cancelled before or during the call."""
        if cancel is not None:
            cancel.check()
        # kept as sent: the caller goes on growing its own list, so copy the list and Items
        request = replace(
            request,
            messages=[dict(m) for m in request.messages],
            tools=list(request.tools),
            model=request.model or self.model,
        )
        n = len(self.requests)
        self.requests.append(request)
        if self.replies:
            value = self.replies.pop(0)
        elif self.responder is not None:
            value = self.responder(request)
        else:
            value = {"text": self.text}
        if isinstance(value, BaseException):
            raise value
        reply = as_reply(value, request, n)
        if cancel is not None:
            cancel.check()  # cancelled while "the model was thinking": the answer is dropped
        return reply


def failing(message: str = "scripted failure") -> ProviderError:
    """A :class:`ProviderError` to put in a script where the call should fail."""
    return ProviderError(f"scripted: {message}")
