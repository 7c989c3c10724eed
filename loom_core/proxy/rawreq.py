"""A request body decoded one level deep: each member, and each history item, as raw JSON.

Why: an agent resends its whole conversation with every call, so a ~10 KB (often
~500 KB) request is mostly what the previous call of the same conversation sent.
Recording it needs three things, all cheap on raw JSON: which members and how many
leading history items are unchanged (the exchange sidecar's delta, :mod:`.sidecar`:
a byte comparison each), the changed parts themselves (embedded in the sidecar line
as the client's bytes, never re-encoded), and a few decoded values -- the model, the
system prompt, the tools, the new history items -- for the effects
(:class:`loom_core.formats.wire.WireRecorder`). Decoding the whole body into Python
objects, comparing nested dicts and encoding them again was most of the CPU a
recorded exchange cost.

Values are decoded on first use and kept; a member whose bytes equal those of the
conversation's previous request (:meth:`RawRequest.inherit`) takes that request's
decoded value, so a 25 KB system prompt or the tool schemas are decoded once per
conversation, not once per call. Decoded values are shared, never mutated.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

_members = msgspec.json.Decoder(dict[str, msgspec.Raw])
_items = msgspec.json.Decoder(list[msgspec.Raw])
_value = msgspec.json.Decoder()
_encode = msgspec.json.Encoder()
_MISSING = object()


class RawRequest:
    """A JSON object request body; see the module docstring."""

    __slots__ = ("members", "hist", "items", "_values", "_decoded")

    def __init__(self, members: dict[str, msgspec.Raw]) -> None:
        self.members = members
        self._values: dict[str, Any] = {}
        self._decoded: dict[int, Any] = {}
        self.hist: str | None = None  # the member holding the conversation: its items
        self.items: list[msgspec.Raw] = []
        for name in ("messages", "input"):  # as sidecar.history_member decides
            raw = members.get(name)
            if raw is not None and memoryview(raw)[:1].tobytes() == b"[":
                self.hist, self.items = name, _items.decode(raw)
                break

    @classmethod
    def parse(cls, body: bytes) -> RawRequest | None:
        """The body as a RawRequest; None when it is not a JSON object.

        Its raw parts go into JSON-lines files as they are, so a body with line breaks
        between its tokens (a pretty-printing client) is decoded and re-encoded compact."""
        try:
            if b"\n" in body or b"\r" in body:
                value = _value.decode(body)
                return cls.of(value) if isinstance(value, dict) else None
            return cls(_members.decode(body))
        except msgspec.DecodeError:
            return None

    @classmethod
    def of(cls, value: dict[str, Any]) -> RawRequest:
        """A decoded request (scrubbed, edited...) as a RawRequest, its values kept."""
        out = cls({k: msgspec.Raw(_encode.encode(v)) for k, v in value.items()})
        out._values.update(value)
        if out.hist is not None:
            out._decoded.update(enumerate(value[out.hist]))
        return out

    def inherit(self, base: RawRequest) -> None:
        """Take ``base``'s decoded values of the members and items whose bytes are equal."""
        for key, value in base._values.items():
            if key not in self._values and self.members.get(key) == base.members.get(key):
                self._values[key] = value
        if self.hist == base.hist:
            for i, value in base._decoded.items():
                if i < len(self.items) and self.items[i] == base.items[i]:
                    self._decoded.setdefault(i, value)

    def get(self, key: str, default: Any = None) -> Any:
        """A member's value (decoded once), or ``default`` when absent."""
        value = self._values.get(key, _MISSING)
        if value is _MISSING:
            raw = self.members.get(key)
            if raw is None:
                return default
            value = self._values[key] = _value.decode(raw)
        return value

    def __contains__(self, key: str) -> bool:
        return key in self.members

    def count(self) -> int:
        """How many history items there are."""
        return len(self.items)

    def item(self, i: int) -> Any:
        """History item ``i``, decoded once."""
        value = self._decoded.get(i, _MISSING)
        if value is _MISSING:
            value = self._decoded[i] = _value.decode(self.items[i])
        return value

    def history(self, start: int = 0) -> Iterator[Any]:
        """The history items from ``start`` on, decoded."""
        for i in range(start, len(self.items)):
            yield self.item(i)

    def value(self) -> dict[str, Any]:
        """The whole request, decoded (for consumers that need it all: spans, events)."""
        out = {key: self.get(key) for key in self.members}
        if self.hist is not None:
            out[self.hist] = list(self.history())
        return out
