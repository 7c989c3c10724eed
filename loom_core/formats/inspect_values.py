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
    """Inspect's ``ModelUsage`` under the names loom's pricing reads (Anthropic's: input
    tokens exclude the cached ones; reasoning as OpenAI's ``output_tokens_details``)."""
    if not isinstance(raw, dict):
        return {}
    usage: dict[str, Any] = {
        "input_tokens": raw.get("input_tokens", 0),
        "output_tokens": raw.get("output_tokens", 0),
    }
    for source, target in (
        ("input_tokens_cache_write", "cache_creation_input_tokens"),
        ("input_tokens_cache_read", "cache_read_input_tokens"),
    ):
        if raw.get(source):
            usage[target] = raw[source]
    if raw.get("reasoning_tokens"):
        usage["output_tokens_details"] = {"reasoning_tokens": raw["reasoning_tokens"]}
    return usage
