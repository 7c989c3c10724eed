"""Read loom-harness durable-run journals (loom-format.md §5).

A journal is JSON lines: a ``header``, then ``intent`` / ``effect`` lines. Like
loom-harness we stop at the first line that does not parse (a torn write), and
an intent with no matching effect is *unfinished*: in flight, paused on a human,
or crashed inside a tool. The tailer of the live-watching issue builds on
:func:`parse_journal_lines`, which works on any run of complete lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import msgspec
from pydantic import ValidationError

from .document import Document, Unfinished, text_and_calls
from .errors import LoadError
from .fastschema import decoder
from .schema import JournalEffect, JournalHeader, TraceHeader
from .trace import describe, gc_paused

_generic = msgspec.json.Decoder()


class _LineType(msgspec.Struct, gc=False):
    type: str = ""


_type_decoder = msgspec.json.Decoder(_LineType)


@dataclass
class JournalState:
    """What the lines read so far say; fed incrementally by the tailer too."""

    header: dict[str, Any] | None = None
    effects: list[Any] = field(default_factory=list)
    entries: list[msgspec.Raw] = field(default_factory=list)
    pending: dict[int, Unfinished] = field(default_factory=dict)
    headers_seen: int = 0
    torn: bool = False

    def feed(self, line: bytes) -> bool:
        """Apply one complete line; False when it does not parse (caller stops)."""
        if not line.strip():
            return True
        try:
            kind = _type_decoder.decode(line).type
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False
        if kind == "header":
            self.header = _generic.decode(line)
            self.headers_seen += 1
            self.pending.clear()
        elif kind == "intent":
            intent = decoder(JournalEffect).decode(line)
            self.pending[intent.seq or 0] = Unfinished(
                intent.seq or 0, intent.kind or "", intent.depth or 0)
        elif kind == "effect":
            effect = decoder(JournalEffect).decode(line)
            self.pending.pop(effect.seq or 0, None)
            self.effects.append(effect)
            self.entries.append(msgspec.Raw(line.strip()))
        return True

    def unfinished(self) -> tuple[Unfinished, ...]:
        return tuple(self.pending[k] for k in sorted(self.pending))


def parse_journal_lines(lines: Iterable[bytes], state: JournalState | None = None) -> JournalState:
    """Feed complete lines into ``state``; stop (torn) at the first bad one."""
    state = state or JournalState()
    for line in lines:
        if not state.feed(line):
            state.torn = True
            break
    return state


def _output(state: JournalState, doc_effects: list[Any]) -> str:
    """The run's answer so far: the last depth-0 model text (what a trace's ``output`` holds)."""
    dec = msgspec.json.Decoder()
    for eff in reversed(doc_effects):
        if eff.kind == "model" and not eff.depth:
            value = dec.decode(eff.result) if eff.result is not None else None
            if isinstance(value, dict):
                return text_and_calls(value)[0]
    return ""


def journal_document(state: JournalState, path: str, source: bytes | None = None) -> Document:
    """A :class:`Document` view of a journal state (header facts mapped onto a trace's)."""
    try:
        head = JournalHeader.model_validate(state.header or {})
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise LoadError(path, f"wrong field type: header {where}: {first['msg']}") from err
    unfinished = state.unfinished()
    paused = any(u.kind == "human" for u in unfinished)
    episodes = list(head.episodes)
    header = TraceHeader(
        version=2, model=head.model, system=head.system or "",
        prompt=episodes[0] if episodes else "", episodes=episodes,
        output="" if paused else _output(state, state.effects),
        truncated=bool(unfinished) or state.torn, paused=paused,
    )
    return Document(
        path=path, format="journal", header=header,
        effects=list(state.effects), entries=list(state.entries), source=source,
        unfinished=unfinished, torn=state.torn,
        extra={"journal_version": head.version},
    )


def load_journal_bytes(data: bytes, path: str) -> Document:
    """Parse a whole journal file."""
    with gc_paused():
        try:
            state = parse_journal_lines(data.split(b"\n"))
        except msgspec.ValidationError as err:
            raise LoadError(path, describe(err)) from err
    if state.header is None and not state.effects:
        raise LoadError(path, "not a loom journal (no header or effect line)")
    return journal_document(state, path, data)
