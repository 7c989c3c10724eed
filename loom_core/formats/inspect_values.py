"""Values inside an Inspect AI sample: attachments undone, text of content, usage, lazy maps.

Inspect's condensing (``inspect_ai/log/_condense.py``) stores every event string longer
than 100 characters once, in the sample's ``attachments``, and leaves
``attachment://<hash>`` in its place (older logs: ``tc://<hash>``); :func:`resolve`
puts the text back. Usage is inspect's ``ModelUsage`` (``model/_model_output.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

_ATTACHMENT = "attachment://"
_OLD_ATTACHMENT = "tc://"
_generic = msgspec.json.Decoder()
_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use"}


class LazyMap(dict[int, Any]):
    """``seq -> value`` whose values are made on first read through ``[]`` or ``get``.

    Why: a sample of 100,000 events would otherwise decode every model call's input
    and every source event up front, for views that look at one step at a time. The
    stored values are what ``make`` needs (raw bytes, ranges); ``values()`` gives those.
    """

    def __init__(self, make: Callable[[Any], Any]) -> None:
        super().__init__()
        self._make = make
        self._made: dict[int, Any] = {}

    def __getitem__(self, key: int) -> Any:
        if key not in self._made:
            self._made[key] = self._make(super().__getitem__(key))
        return self._made[key]

    def get(self, key: int, default: Any = None) -> Any:
        return self[key] if key in self else default


def resolve(value: Any, attachments: dict[str, Any]) -> Any:
    """``value`` with every ``attachment://hash`` string replaced by its text."""
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT):
            return attachments.get(value[len(_ATTACHMENT) :], value)
        if value.startswith(_OLD_ATTACHMENT):
            return attachments.get(value[len(_OLD_ATTACHMENT) :], value)
        return value
    if isinstance(value, list):
        return [resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, attachments) for k, v in value.items()}
    return value


def decoded(raw: msgspec.Raw, attachments: dict[str, Any]) -> Any:
    try:
        return resolve(_generic.decode(raw), attachments)
    except (msgspec.DecodeError, RecursionError):
        return bytes(raw).decode("utf-8", "replace")


def text_of(content: Any) -> str:
    """The text of message content: a string, or the ``text`` parts of a list."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(p for p in parts if isinstance(p, str))


def usage(raw: Any) -> dict[str, Any]:
    """Inspect's ``ModelUsage`` under the names loom's pricing reads; reasoning as OpenAI's
    ``output_tokens_details``.

    Which cache names: inspect documents ``input_tokens`` as excluding the cached tokens
    (Anthropic's sense: ``cache_read_input_tokens`` / ``cache_creation_input_tokens``),
    and current releases normalise every provider so. Older ones passed OpenAI's
    ``prompt_tokens`` through, cached tokens included (a real 0.3.95 log: input 5,915 of
    which 3,840 cached, ``total_tokens`` 6,122 = input + output). Such a call -- its total
    is input + output while it has cache counts -- keeps its input and says the cached
    part the way OpenAI does (``input_tokens_details.cached_tokens``), so it is priced
    once, not twice; the input count stays inspect's own.
    """
    if not isinstance(raw, dict):
        return {}
    usage: dict[str, Any] = {
        "input_tokens": raw.get("input_tokens", 0),
        "output_tokens": raw.get("output_tokens", 0),
    }
    read, write = raw.get("input_tokens_cache_read"), raw.get("input_tokens_cache_write")
    total = _counts(raw, "total_tokens")
    if (
        (read or write)
        and total is not None
        and total == _counts(raw, "input_tokens", "output_tokens")
    ):
        usage["input_tokens_details"] = {
            "cached_tokens": read or 0,
            "cache_write_tokens": write or 0,
        }
    else:
        if write:
            usage["cache_creation_input_tokens"] = write
        if read:
            usage["cache_read_input_tokens"] = read
    if raw.get("reasoning_tokens"):
        usage["output_tokens_details"] = {"reasoning_tokens": raw["reasoning_tokens"]}
    return usage


def _counts(raw: dict[str, Any], *keys: str) -> int | None:
    """The sum of ``raw``'s integer counts ``keys`` (None when one is not an integer)."""
    values = [raw.get(k) for k in keys]
    if not all(type(v) is int for v in values):
        return None
    return sum(v for v in values if type(v) is int)


def answer_of(output: dict[str, Any], attachments: dict[str, Any]) -> str:
    """A sample's answer as inspect records it (``EvalSample.output``, a ``ModelOutput``):
    its ``completion``, or the first choice's text where the log does not store
    ``completion`` (a computed property in some versions); attachments undone."""
    completion = resolve(output.get("completion"), attachments)
    if isinstance(completion, str) and completion:
        return completion
    choices = output.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if isinstance(message, dict):
        return text_of(resolve(message.get("content"), attachments))
    return ""


def response_of(
    output: dict[str, Any], attachments: dict[str, Any]
) -> tuple[str, list[dict[str, Any]], str]:
    """A model event's ``output``: its text, tool calls as loom records them and stop
    reason in loom's words (``end_turn`` / ``tool_use``; others kept as inspect wrote them)."""
    choices = output.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else {}
    choice = choice if isinstance(choice, dict) else {}
    found = choice.get("message")
    message: dict[str, Any] = found if isinstance(found, dict) else {}
    text = text_of(resolve(message.get("content"), attachments))
    if not text and isinstance(output.get("completion"), str) and not message:
        text = resolve(output["completion"], attachments)
    calls = [
        {
            "id": c.get("id") if isinstance(c.get("id"), str) else "",
            "name": c.get("function") if isinstance(c.get("function"), str) else "",
            "input": a if isinstance(a := resolve(c.get("arguments"), attachments), dict) else {},
        }
        for c in message.get("tool_calls") or []
        if isinstance(c, dict)
    ]
    stop = choice.get("stop_reason")
    stop = "tool_use" if calls else _STOP_REASONS.get(stop, stop) if isinstance(stop, str) else ""
    return text, calls, stop
