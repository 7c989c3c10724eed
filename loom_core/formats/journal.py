"""Read loom-harness durable-run journals (loom-format.md §5).

A journal is JSON lines: a ``header``, then ``intent`` / ``effect`` lines. Like
loom-harness we stop at the first line that does not parse (a torn write), and
an intent with no matching effect is *unfinished*: in flight, paused on a human,
or crashed inside a tool. The live tail reads line by line with
:meth:`JournalState.read_line`: a line it cannot read is named and skipped (the
state stays as it was), so the lines after it are still followed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from loom_core.errors import LoadError
from loom_core.formats.document import Document, Unfinished, decode_raw, text_and_calls
from loom_core.formats.fastschema import decoder
from loom_core.formats.gc_pause import gc_paused
from loom_core.formats.structs import FastJournalEffect, JournalHeader, TraceHeader
from loom_core.formats.tolerant import (
    decode_struct,
    decode_value,
    maybe_deep,
    surrogate_cause,
    surrogates_escaped,
    validated,
    with_headroom,
)
from loom_core.formats.trace import with_problems

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
    problems: list[str] = field(default_factory=list)  # wrongly typed fields, in words
    line_no: int = 0  # lines fed so far: names the line of a problem

    def feed(self, line: bytes) -> bool:
        """Apply one complete line; False when it does not parse (caller stops)."""
        self.line_no += 1
        if not line.strip():
            return True
        try:
            kind = _line_type(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            shown = surrogates_escaped(line)  # what Python's json (so loom-harness) reads
            if shown is None:
                return False
            try:
                kind = _line_type(shown)
            except (msgspec.DecodeError, msgspec.ValidationError):
                return False
            cause = str(surrogate_cause(line)).rsplit(" at line ", 1)[0]
            self.problems.append(f"line {self.line_no}: {cause}, shown as its escape")
            line = shown
        if kind == "header":
            self.header = decode_value(line)
            self.headers_seen += 1
            self.pending.clear()
        elif kind == "intent":
            intent = self._effect(line)
            self.pending[intent.seq or 0] = Unfinished(
                intent.seq or 0, intent.kind or "", intent.depth or 0
            )
        elif kind == "effect":
            effect = self._effect(line)
            self.pending.pop(effect.seq or 0, None)
            self.effects.append(effect)
            self.entries.append(msgspec.Raw(line.strip()))
        return True

    def read_line(self, line: bytes) -> str | None:
        """Apply one complete line (the live tail); or say why it cannot be read, leaving
        the state as it was. ``line_no`` counts it either way, so it names the line.

        Why stricter than :meth:`feed` on two points: a line that is not UTF-8, and a
        header the document cannot be built from (a ``version`` of the wrong type), are
        skipped here, because the live view builds its document from every header.
        """
        cause = _bad_text(line) or (_header_cause(line) if b'"header"' in line else None)
        if cause is not None:
            self.line_no += 1
            return cause
        cause = _unreadable(self, line)
        return None if cause is None else cause.removeprefix("is ")

    def _effect(self, line: bytes) -> Any:
        """An intent or effect line as a struct; wrongly typed fields read as defaults."""
        try:
            return decoder(FastJournalEffect).decode(line)
        except msgspec.ValidationError:
            found: list[str] = []
            effect = decode_struct(line, FastJournalEffect, found)
            where = "" if any("'seq'" in p for p in found) else f" (seq {effect.seq or 0})"
            self.problems.extend(f"line {self.line_no}{where}: {p}" for p in found)
            return effect

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
    for eff in reversed(doc_effects):
        if eff.kind == "model" and not eff.depth:
            value = decode_raw(eff.result)
            if isinstance(value, dict):
                return text_and_calls(value)[0]
    return ""


def journal_document(
    state: JournalState, path: str, source: bytes | None = None, warnings: tuple[str, ...] = ()
) -> Document:
    """A :class:`Document` view of a journal state (header facts mapped onto a trace's)."""
    problems: list[str] = []
    header_values = state.header if isinstance(state.header, dict) else {}
    head = validated(JournalHeader, header_values, path, problems, where="header member")
    unfinished = state.unfinished()
    paused = any(u.kind == "human" for u in unfinished)
    episodes = list(head.episodes)
    header = TraceHeader(
        version=2,
        model=head.model,
        system=head.system or "",
        prompt=episodes[0] if episodes else "",
        episodes=episodes,
        output="" if paused else _output(state, state.effects),
        truncated=bool(unfinished) or state.torn,
        paused=paused,
    )
    return Document(
        path=path,
        format="journal",
        header=header,
        effects=list(state.effects),
        entries=list(state.entries),
        source=source,
        unfinished=unfinished,
        torn=state.torn,
        warnings=with_problems(warnings, problems + state.problems),
        extra={"journal_version": head.version},
    )


def load_journal_bytes(data: bytes, path: str) -> Document:
    """Parse a whole journal file, stopping like loom-harness at the first unreadable line
    (a torn write); a warning names that line and why it could not be read. A line that
    is not UTF-8 is one of those (the live tail skips it the same way), not a reason to
    refuse the lines before it."""
    state = JournalState()
    warnings: tuple[str, ...] = ()
    lines = data.split(b"\n")
    with gc_paused():
        for n, line in enumerate(lines, 1):
            bad = _bad_text(line)
            cause = f"is {bad}" if bad is not None else _unreadable(state, line)
            if cause is not None:
                state.torn = True
                if line.strip() or n < len(lines):
                    warnings = (
                        f"line {n} {cause}"
                        + (f"; the run is read up to line {n - 1}" if n > 1 else ""),
                    )
                break
    if state.header is None and not state.effects:
        raise LoadError(
            path,
            "not a loom journal (no header or effect line)"
            + (f": {warnings[0]}" if warnings else ""),
        )
    return journal_document(state, path, data, warnings)


def _line_type(line: bytes) -> str:
    """The line's ``type`` member (msgspec's errors propagate)."""
    decode = _type_decoder.decode
    return (with_headroom(decode, line) if maybe_deep(line) else decode(line)).type


def _bad_text(line: bytes) -> str | None:
    """Why a line is not text loom could have written (it writes ASCII; at least UTF-8)."""
    if line.isascii():
        return None
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"not UTF-8 text (bad byte at column {err.start + 1})"
    return None


def _header_cause(line: bytes) -> str | None:
    """Why a header line cannot head a document (see :func:`journal_document`), or None;
    a line that is not a header, or not readable at all, is left to the reader."""
    if surrogate_cause(line) is not None:  # read as feed() reads it: escapes as text
        line = surrogates_escaped(line) or line
    try:
        value = decode_value(line)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or value.get("type") != "header":
        return None
    try:
        validated(
            JournalHeader, value if isinstance(value, dict) else {}, "", [], where="header member"
        )
    except LoadError as err:
        return err.cause
    return None


def _unreadable(state: JournalState, line: bytes) -> str | None:
    """Feed one line; None when it was read, else why it was not."""
    try:
        if state.feed(line):
            return None
    except RecursionError:
        return "is nested too deeply"
    try:
        _generic.decode(line)
    except msgspec.DecodeError as err:
        return "is not valid JSON" if "truncated" not in str(err) else "is incomplete (torn)"
    except RecursionError:
        return "is nested too deeply"
    return 'is not a journal line (an object with a "type")'
