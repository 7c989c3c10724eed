"""The GenAI span attributes of one model call that need no message content.

From the GenAI semantic conventions: ``gen_ai.request.*`` (the sampling settings the
request asked for), ``gen_ai.response.model`` / ``.id`` / ``.finish_reasons``, and usage:
``gen_ai.usage.input_tokens`` counts *every* input token, cached ones included (the
conventions ask for the provider's total), with ``gen_ai.usage.cache_read.input_tokens``
and ``gen_ai.usage.cache_creation.input_tokens`` as the cached parts. Anthropic reports
``input_tokens`` without the cached parts, so they are added back; OpenAI's
``prompt_tokens`` / ``input_tokens`` already include them.
"""

from __future__ import annotations

from typing import Any

# request member -> attribute, where every dialect names it the same
_REQUEST = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "seed": "gen_ai.request.seed",
}
_MAX_TOKENS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one (any JSON value may be anywhere)."""
    return value if isinstance(value, dict) else {}


def request_attributes(request: dict[str, Any]) -> dict[str, Any]:
    """``gen_ai.request.*`` for the settings the request gave (numbers only)."""
    out: dict[str, Any] = {}
    for key, name in _REQUEST.items():
        value = request.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = value
    for key in _MAX_TOKENS:
        if _int(request.get(key)):
            out["gen_ai.request.max_tokens"] = request[key]
            break
    return out


def usage_attributes(response: dict[str, Any], dialect: str) -> dict[str, int]:
    """``gen_ai.usage.*`` from the response's usage (see the module docstring)."""
    usage = as_dict(response.get("usage"))
    if dialect == "anthropic":
        read = _int(usage.get("cache_read_input_tokens"))
        written = _int(usage.get("cache_creation_input_tokens"))
        tokens_in = _int(usage.get("input_tokens")) + read + written
        tokens_out = _int(usage.get("output_tokens"))
    elif dialect == "responses":
        read = _int(as_dict(usage.get("input_tokens_details")).get("cached_tokens"))
        written = 0
        tokens_in, tokens_out = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
    else:
        read = _int(as_dict(usage.get("prompt_tokens_details")).get("cached_tokens"))
        written = 0
        tokens_in = _int(usage.get("prompt_tokens"))
        tokens_out = _int(usage.get("completion_tokens"))
    out = {"gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out}
    if read:
        out["gen_ai.usage.cache_read.input_tokens"] = read
    if written:
        out["gen_ai.usage.cache_creation.input_tokens"] = written
    return out


def finish_reasons(response: dict[str, Any], dialect: str) -> list[str]:
    """Why the model stopped, as the provider said it."""
    if dialect == "openai":
        choices = response.get("choices")
        listed = choices if isinstance(choices, list) else []
        reasons = [as_dict(c).get("finish_reason") for c in listed]
    elif dialect == "responses":
        reasons = [response.get("status")]
    else:
        reasons = [response.get("stop_reason")]
    return [str(r) for r in reasons if isinstance(r, str) and r]


def response_attributes(
    request: dict[str, Any], response: dict[str, Any], dialect: str
) -> dict[str, Any]:
    """Every content-free attribute of a chat span beyond the operation and provider."""
    out: dict[str, Any] = {**request_attributes(request), **usage_attributes(response, dialect)}
    if isinstance(response.get("model"), str):
        out["gen_ai.response.model"] = response["model"]
    if isinstance(response.get("id"), str):
        out["gen_ai.response.id"] = response["id"]
    reasons = finish_reasons(response, dialect)
    if reasons:
        out["gen_ai.response.finish_reasons"] = reasons
    return out
