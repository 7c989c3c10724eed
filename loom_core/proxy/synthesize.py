"""Render a recorded response object as the SSE stream its API would have sent (§6.8).

Used by replay (a client that asks for a stream gets one) and by the screened path
(a shield must judge the whole stream before the client sees it, so the screened
response is re-streamed). Each text / tool input is sent as one delta: an SDK
accumulating the deltas rebuilds exactly the recorded object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from loom_core.formats.wire import dialect_of


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n".encode()


def _data(payload: Any) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


def anthropic_sse(message: dict[str, Any]) -> bytes:
    """``message_start``, per block start / one delta / stop, ``message_delta``, ``message_stop``."""
    usage = message.get("usage") or {}
    head = {k: v for k, v in message.items() if k not in ("content", "stop_reason", "usage")}
    head = {"id": "msg_replay", "type": "message", "role": "assistant", **head}
    out = [
        _event(
            "message_start",
            {"message": {**head, "content": [], "stop_reason": None, "usage": usage}},
        )
    ]
    index = 0
    for block in message.get("content") or []:
        kind = block.get("type")
        if kind == "tool_use" or kind == "server_tool_use":
            start = {"type": kind, "id": block.get("id"), "name": block.get("name"), "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}
            ]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": ""}
            deltas = [{"type": "thinking_delta", "thinking": block.get("thinking", "")}]
            if block.get("signature"):
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind == "text":
            if not block.get("text"):
                continue  # an empty text block is invalid to send back to the API
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        else:  # redacted_thinking, tool results of server tools...: whole block at start
            start, deltas = block, []
        out.append(_event("content_block_start", {"index": index, "content_block": start}))
        out.extend(_event("content_block_delta", {"index": index, "delta": d}) for d in deltas)
        out.append(_event("content_block_stop", {"index": index}))
        index += 1
    out.append(
        _event(
            "message_delta",
            {
                "delta": {
                    "stop_reason": message.get("stop_reason"),
                    "stop_sequence": message.get("stop_sequence"),
                },
                "usage": {"output_tokens": usage.get("output_tokens", 0)},
            },
        )
    )
    out.append(_event("message_stop", {}))
    return b"".join(out)


def chat_sse(response: dict[str, Any]) -> bytes:
    """Role chunk, content chunk, one chunk per tool call, finish chunk, usage chunk, [DONE]."""
    base = {k: response[k] for k in ("id",) if k in response}
    base.update(
        {
            "object": "chat.completion.chunk",
            "created": response.get("created", 0),
            "model": response.get("model", ""),
        }
    )
    out = []
    for choice in response.get("choices") or [{}]:
        index, message = choice.get("index", 0), choice.get("message") or {}

        def chunk(delta: dict[str, Any], finish: str | None = None, index: Any = index) -> bytes:
            return _data(
                {**base, "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}
            )

        out.append(chunk({"role": "assistant", "content": ""}))
        if message.get("content"):
            out.append(chunk({"content": message["content"]}))
        if message.get("refusal"):
            out.append(chunk({"refusal": message["refusal"]}))
        for i, call in enumerate(message.get("tool_calls") or []):
            out.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": call.get("id"),
                                "type": "function",
                                "function": call.get("function") or {},
                            }
                        ]
                    }
                )
            )
        out.append(chunk({}, choice.get("finish_reason") or "stop"))
    if response.get("usage"):
        out.append(_data({**base, "choices": [], "usage": response["usage"]}))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def responses_sse(response: dict[str, Any]) -> bytes:
    """``response.created``, per output item added / deltas / done, ``response.completed``."""
    out: list[bytes] = []

    def emit(kind: str, **payload: Any) -> None:
        out.append(_event(kind, {"sequence_number": len(out), **payload}))

    emit("response.created", response={**response, "status": "in_progress", "output": []})
    emit("response.in_progress", response={**response, "status": "in_progress", "output": []})
    for oi, item in enumerate(response.get("output") or []):
        kind, item_id = item.get("type"), item.get("id", f"item_{oi}")
        if kind == "message":
            emit(
                "response.output_item.added",
                output_index=oi,
                item={**item, "status": "in_progress", "content": []},
            )
            for ci, part in enumerate(item.get("content") or []):
                ids = {"item_id": item_id, "output_index": oi, "content_index": ci}
                text = part.get("text", "")
                emit(
                    "response.content_part.added",
                    **ids,
                    part={**part, "text": ""} if part.get("type") == "output_text" else part,
                )
                if part.get("type") == "output_text":
                    emit("response.output_text.delta", **ids, delta=text, logprobs=[])
                    emit("response.output_text.done", **ids, text=text, logprobs=[])
                emit("response.content_part.done", **ids, part=part)
        elif kind == "function_call":
            emit(
                "response.output_item.added",
                output_index=oi,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            emit(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=oi,
                delta=item.get("arguments", ""),
            )
            emit(
                "response.function_call_arguments.done",
                item_id=item_id,
                output_index=oi,
                arguments=item.get("arguments", ""),
            )
        else:
            emit("response.output_item.added", output_index=oi, item=item)
        emit("response.output_item.done", output_index=oi, item=item)
    final = (
        "response.incomplete" if response.get("status") == "incomplete" else "response.completed"
    )
    emit(final, response=response)
    return b"".join(out)


SYNTHESIZERS: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "anthropic": anthropic_sse,
    "openai": chat_sse,
    "responses": responses_sse,
}


def synthesize(response: dict[str, Any]) -> bytes:
    """The SSE rendering of a recorded response, by its shape."""
    return SYNTHESIZERS[dialect_of(response)](response)
