"""The response side of a recorded exchange: its dialect and its model effect ``result``.

Apart from :mod:`.wire` (which turns whole exchanges into effects) because readers of
a single response -- the proxy deciding what to record, fork points, OTLP spans, the
synthesized replay -- need only this, and each module stays small. The dialect is
decided from the response shape, as loom-harness does (loom-format.md §6.2).
"""

from __future__ import annotations

import json
from typing import Any


def is_openai(response: dict[str, Any]) -> bool:
    """The dialect is decided from the response shape, like loom-harness does."""
    return "choices" in response


def is_responses(response: dict[str, Any]) -> bool:
    """An OpenAI Responses API object (``object: "response"``, an ``output`` list)."""
    return response.get("object") == "response" or (
        isinstance(response.get("output"), list)
        and "choices" not in response
        and "content" not in response
    )


def dialect_of(response: dict[str, Any]) -> str:
    """``responses``, ``openai`` (chat) or ``anthropic``, from the response shape."""
    if is_responses(response):
        return "responses"
    return "openai" if is_openai(response) else "anthropic"


def model_dialect(response: Any) -> str | None:
    """The dialect of a *model* response, or None for anything else (token counts,
    embeddings, file objects...), which a recording proxy forwards but does not record."""
    if not isinstance(response, dict):
        return None
    if is_responses(response):
        return "responses"
    if isinstance(response.get("choices"), list):
        return "openai"
    if response.get("type") == "message" or isinstance(response.get("content"), list):
        return "anthropic"
    return None


def decode_args(arguments: Any) -> dict[str, Any]:
    """OpenAI ``arguments`` (a JSON string) as an object; undecodable -> ``{}`` (§1.4).
    Responses and recorded requests (:mod:`loom_core.fork.requests`) decode them the same way."""
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def responses_call(item: dict[str, Any]) -> dict[str, Any]:
    """A Responses API ``*_call`` output item as a loom tool_call (id = ``call_id``)."""
    kind = str(item.get("type") or "")
    if kind == "function_call":
        args = decode_args(item.get("arguments"))
    elif isinstance(item.get("input"), str):  # custom_tool_call: free-form input
        args = {"input": item["input"]}
    else:  # local_shell_call & co: the action object is the input
        args = item["action"] if isinstance(item.get("action"), dict) else {}
    name = item.get("name") or kind.removesuffix("_call")
    return {"id": str(item.get("call_id") or ""), "name": str(name), "input": args}


def _responses_result(response: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    text, calls = "", []
    for item in response.get("output") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            text += "".join(
                p.get("text") or ""
                for p in item.get("content") or []
                if isinstance(p, dict) and p.get("type") == "output_text"
            )
        elif str(item.get("type") or "").endswith("_call") and item.get("call_id"):
            calls.append(responses_call(item))
    return text, calls


def response_to_result(response: dict[str, Any]) -> dict[str, Any]:
    """The model effect ``result`` for one (final, screened) response (§1.4)."""
    if is_responses(response):
        text, calls = _responses_result(response)
        usage = response.get("usage") or {}
        tokens = {
            "input_tokens": usage.get("input_tokens", 0) or 0,
            "output_tokens": usage.get("output_tokens", 0) or 0,
        }
    elif is_openai(response):
        choices = response.get("choices") or [{}]
        message = (choices[0] or {}).get("message") or {}
        text = message["content"] if isinstance(message.get("content"), str) else ""
        calls = [
            {
                "id": c.get("id") or "",
                "name": (c.get("function") or {}).get("name") or "",
                "input": decode_args((c.get("function") or {}).get("arguments")),
            }
            for c in message.get("tool_calls") or []
            if isinstance(c, dict)
        ]
        usage = response.get("usage") or {}
        tokens = {
            "input_tokens": usage.get("prompt_tokens", 0) or 0,
            "output_tokens": usage.get("completion_tokens", 0) or 0,
        }
    else:
        blocks = [b for b in response.get("content") or [] if isinstance(b, dict)]
        text = "".join(b.get("text") or "" for b in blocks if b.get("type") == "text")
        calls = [
            {
                "id": b.get("id") or "",
                "name": b.get("name") or "",
                "input": b.get("input") if isinstance(b.get("input"), dict) else {},
            }
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        usage = response.get("usage") or {}
        tokens = {
            "input_tokens": usage.get("input_tokens", 0) or 0,
            "output_tokens": usage.get("output_tokens", 0) or 0,
        }
    return {
        "text": text,
        "tool_calls": calls,
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": tokens,
    }
