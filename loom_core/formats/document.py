"""The in-memory form of any loom document (trace, journal or wirelog).

Why this shape: a 130 MB trace must open faster than ``json.loads`` parses it,
so effects are kept as small typed structs whose payloads (``result``, ``meta``)
are raw views into the file's bytes, decoded only when a step is looked at. The
raw bytes of each entry are kept too, so nothing the file held is lost and the
"raw JSON" view shows exactly what is on disk. Documents are immutable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import msgspec

from loom_core.formats.entry_index import EntryIndex
from loom_core.formats.fastschema import decoder
from loom_core.formats.structs import (
    FastEffectEntry,
    FastEffectMeta,
    FastModelResult,
    ShieldEvent,
    TraceHeader,
)

FastEffect = FastEffectEntry
_EMPTY_RESULT = FastModelResult()
EMPTY_META = FastEffectMeta()
_generic = msgspec.json.Decoder()
TOO_DEEP = "(a value nested too deeply to show)"
LOOM_FORMATS = ("trace", "journal", "wirelog", "exchanges")


def decode_raw(raw: msgspec.Raw | None) -> Any:
    """Decode a raw payload to plain Python values (``None`` stays ``None``)."""
    if raw is None:
        return None
    try:
        return _generic.decode(raw)
    except msgspec.ValidationError:  # e.g. 1e400: msgspec refuses, Python reads inf
        import json

        return json.loads(bytes(raw))
    except RecursionError:  # deeper than the stack allows here: a view shows this instead
        return TOO_DEEP


def text_and_calls(value: Any) -> tuple[str, list[dict[str, Any]]]:
    """Text and tool calls of a decoded model result; wrong types read as empty (§1.4).

    loom-harness tolerates missing or null members; a hand-edited file can also hold
    ``"text": 5`` or ``"tool_calls": "x"``, which must not crash a view or the CLI.
    """
    if not isinstance(value, dict):
        return "", []
    text, calls = value.get("text"), value.get("tool_calls")
    return (
        text if isinstance(text, str) else "",
        [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else [],
    )


_INT64 = 1 << 63


def whole(value: Any) -> int:
    """A token count from any JSON value: a finite number as an integer, anything else
    (a string, a bool, a list, a number past 64 bits) 0 -- as the views count usage."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value) if math.isfinite(value) and abs(value) < _INT64 else 0


@dataclass(frozen=True, eq=False)
class Unfinished:
    """An intent with no effect after it: in flight, paused or crashed (§5.1)."""

    seq: int
    kind: str
    depth: int


@dataclass(frozen=True, eq=False)
class Document:
    """A loaded loom document; see the module docstring for the representation.

    ``effects`` are the log entries as typed structs with raw payloads. Journals
    also keep ``entries``, the raw bytes of each effect line; traces need not,
    since saving re-reads their source losslessly. ``extra``: what a reader knows
    beyond the trace, e.g. ``started`` (when its source says it began) and ``ended``
    (how its producer says it ended: ``{"error": text}`` or ``{"limit": text}``).
    """

    path: str
    format: str  # LOOM_FORMATS ("exchanges": a proxy's sidecar) or a foreign reader's name
    header: TraceHeader
    effects: Sequence[Any]  # a list, or a big trace's LazyEffects (decoded when asked for)
    entries: list[msgspec.Raw] | None = None
    wire: list[msgspec.Raw] | None = None
    source: bytes | None = None
    unfinished: tuple[Unfinished, ...] = ()
    torn: bool = False
    warnings: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    # where the log's entries are in ``source`` (a big trace's progressive load)
    entry_index: EntryIndex | None = None
    # what a view derived from the whole document (a context walk), kept here so that it
    # goes with the document: a module-level cache keyed by the document, even a weak one,
    # kept each document alive through its value. Not copied by ``dataclasses.replace``.
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    # -- header facts ---------------------------------------------------------
    @property
    def version(self) -> int:
        return self.header.version

    @property
    def episodes(self) -> list[str]:
        if self.header.episodes is not None:
            return list(self.header.episodes)
        return [self.header.prompt] if self.header.prompt else []

    @property
    def shield_events(self) -> list[ShieldEvent]:
        return list(self.header.shield_events or [])

    @property
    def systems(self) -> dict[str, str]:
        return dict(self.header.systems or {})

    @property
    def is_proxy(self) -> bool:
        return self.header.recorded_via == "proxy"

    @property
    def is_foreign(self) -> bool:
        """Read from another tool's format (:mod:`loom_core.formats.foreign`)."""
        return self.format not in LOOM_FORMATS

    @property
    def is_whole_run(self) -> bool:
        """A finished document with a loom trace behind it (``source``): what fork, heal
        and branches work from. A foreign run counts: its reader made that trace."""
        return self.format == "trace" or (self.is_foreign and self.source is not None)

    def __len__(self) -> int:
        return len(self.effects)

    # -- payloads, decoded on demand ------------------------------------------
    def result(self, i: int) -> Any:
        """The ``result`` of effect ``i`` as plain Python values."""
        return decode_raw(self.effects[i].result)

    def meta(self, i: int) -> Any:
        """``meta`` of effect ``i`` as a typed struct (all fields ``None`` when absent)."""
        return self.effects[i].meta or EMPTY_META

    def model_result(self, i: int) -> Any:
        """Effect ``i``'s result as a typed model result (tolerant, §1.4)."""
        raw = self.effects[i].result
        if raw is None:
            return _EMPTY_RESULT
        try:
            return decoder(FastModelResult).decode(raw)
        except msgspec.ValidationError:
            return _EMPTY_RESULT

    def raw_entry(self, i: int) -> bytes:
        """Entry ``i`` as JSON: its exact line for journals, its bytes in the source for
        traces (found through ``entry_index`` when the load made one), else (no source: a head preview) its fields re-encoded."""
        if self.entries is not None:
            return bytes(self.entries[i])
        if self.entry_index is not None and self.source is not None:
            found = self.entry_index.raw(self.source, i)
            if found is not None:
                return found
        source_entries = self._source_entries
        if source_entries is not None and i < len(source_entries):
            return bytes(source_entries[i])
        return msgspec.json.encode(self.effects[i])

    @cached_property
    def _source_entries(self) -> list[msgspec.Raw] | None:
        """The log's object entries as raw views into ``source`` (what ``effects`` came from).

        Re-encoding a struct would show ``null`` for absent members and drop unknown
        ones; the raw view must show the entry as it is on disk. Split on first use only.
        """
        if self.source is None:
            return None
        try:
            top = msgspec.json.decode(self.source, type=dict[str, msgspec.Raw])
            raws = msgspec.json.decode(top["log"], type=list[msgspec.Raw])
        except (msgspec.DecodeError, msgspec.ValidationError, KeyError):
            return None  # e.g. NaN in the file: fall back to re-encoding
        return [r for r in raws if bytes(memoryview(r)[:1]) == b"{"]

    @cached_property
    def wire_values(self) -> list[Any]:
        """The ``wire`` list decoded (proxy traces only; empty otherwise)."""
        return [decode_raw(w) for w in (self.wire or [])]
