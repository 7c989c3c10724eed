"""What a fake model says, rendered in each API's real wire shapes (JSON and SSE).

Why hand-written shapes: the tests must not reach the internet, yet the proxy has to
meet what the real APIs send -- Anthropic ``ping`` events and split tool-input JSON,
OpenAI's separate usage chunk and tool calls assembled by index, the Responses API's
item/part/delta event sequence -- so that the real SDK clients accept every byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from loom_core.demo.fake_model import message_json, message_sse


@dataclass
class Reply:
    """One scripted model turn (or failure) of the fake upstream."""

    text: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # id, name, input
    usage: tuple[int, int] = (11, 7)
    status: int = 200  # != 200: an API error with ``error`` as body
    error: dict[str, Any] | None = None
    drop_after: int | None = None  # SSE: close the connection after this many events
    pace: float = 0.0  # SSE: seconds between events
    stall: float = 0.0  # seconds to wait before answering at all
    headers: dict[str, str] = field(default_factory=dict)  # extra headers (e.g. retry-after)
    cache: tuple[int, int] = (0, 0)  # Anthropic JSON replies: cache read, cache write tokens


def _pieces(text: str, n: int = 3) -> list[str]:
    """``text`` cut into up to ``n`` non-empty pieces (deltas arrive in parts)."""
    if not text:
        return []
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _sse(kind: str | None, data: Any) -> bytes:
    head = f"event: {kind}\n" if kind else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def anthropic_json(r: Reply, n: int, model: str) -> dict[str, Any]:
    out = message_json(r.text, r.calls, r.usage, f"msg_{n:04d}", model)
    if any(r.cache):  # billed apart from input_tokens, as the Messages API reports them
        out["usage"].update(
            cache_read_input_tokens=r.cache[0], cache_creation_input_tokens=r.cache[1]
        )
    return out


def anthropic_sse(r: Reply, n: int, model: str) -> list[bytes]:
    return message_sse(
        anthropic_json(r, n, model), r.usage, text_pieces=3, json_pieces=4, ping_after_first=True
    )


def chat_json(r: Reply, n: int, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.text or None, "refusal": None}
    if r.calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for i, name, args in r.calls
        ]
    return {
        "id": f"chatcmpl-{n:04d}",
        "object": "chat.completion",
        "created": 1_800_000_000 + n,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if r.calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": r.usage[0],
            "completion_tokens": r.usage[1],
            "total_tokens": sum(r.usage),
        },
    }


def chat_sse(r: Reply, n: int, model: str, usage: bool) -> list[bytes]:
    base = {
        "id": f"chatcmpl-{n:04d}",
        "object": "chat.completion.chunk",
        "created": 1_800_000_000 + n,
        "model": model,
        "system_fingerprint": "fp_fake",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            None,
            {
                **base,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            },
        )

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    out += [chunk({"content": p}) for p in _pieces(r.text)]
    for k, (i, name, args) in enumerate(r.calls):
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": k,
                            "id": i,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        out += [
            chunk({"tool_calls": [{"index": k, "function": {"arguments": p}}]})
            for p in _pieces(json.dumps(args), 3)
        ]
    out.append(chunk({}, "tool_calls" if r.calls else "stop"))
    if usage:
        out.append(
            _sse(
                None,
                {
                    **base,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": r.usage[0],
                        "completion_tokens": r.usage[1],
                        "total_tokens": sum(r.usage),
                    },
                },
            )
        )
    out.append(b"data: [DONE]\n\n")
    return out


def responses_json(r: Reply, n: int, model: str) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if r.text:
        output.append(
            {
                "id": f"msg_{n:04d}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": r.text, "annotations": []}],
            }
        )
    output += [
        {
            "id": f"fc_{n:04d}_{k}",
            "type": "function_call",
            "status": "completed",
            "call_id": i,
            "name": name,
            "arguments": json.dumps(args),
        }
        for k, (i, name, args) in enumerate(r.calls)
    ]
    return {
        "id": f"resp_{n:04d}",
        "object": "response",
        "created_at": 1_800_000_000 + n,
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": r.usage[0],
            "output_tokens": r.usage[1],
            "total_tokens": sum(r.usage),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def responses_sse(r: Reply, n: int, model: str) -> list[bytes]:
    final = responses_json(r, n, model)
    out: list[bytes] = []

    def emit(kind: str, **payload: Any) -> None:
        out.append(_sse(kind, {"type": kind, "sequence_number": len(out), **payload}))

    pending = {**final, "status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for oi, item in enumerate(final["output"]):
        if item["type"] == "message":
            emit(
                "response.output_item.added",
                output_index=oi,
                item={**item, "status": "in_progress", "content": []},
            )
            ids = {"item_id": item["id"], "output_index": oi, "content_index": 0}
            empty = {"type": "output_text", "text": "", "annotations": []}
            emit("response.content_part.added", **ids, part=empty)
            for p in _pieces(r.text):
                emit("response.output_text.delta", **ids, delta=p, logprobs=[])
            emit("response.output_text.done", **ids, text=r.text, logprobs=[])
            emit("response.content_part.done", **ids, part=item["content"][0])
        else:
            emit(
                "response.output_item.added",
                output_index=oi,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for p in _pieces(item["arguments"]):
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=oi,
                    delta=p,
                )
            emit(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=oi,
                arguments=item["arguments"],
            )
        emit("response.output_item.done", output_index=oi, item=item)
    emit("response.completed", response=final)
    return out
