"""Load ``*.loom.json`` traces fast and check them (loom-format.md §1, §2, §4.2).

The load path: one scan splits the top level into raw members, ``log`` into raw
entries, each entry into a typed struct (:mod:`.structs`, held equal to the pydantic
schema by a test) with raw payloads; the small members are checked as the schema's
lax mode would (:mod:`.header`), without importing pydantic. With the garbage collector
paused this is several times faster than a plain ``json.loads`` of the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from loom_core.errors import LoadError
from loom_core.formats.canonical import checksum
from loom_core.formats.document import Document, FastEffect
from loom_core.formats.fastcheck import parallel_checksum
from loom_core.formats.fastschema import decoder, list_of
from loom_core.formats.gc_pause import gc_paused
from loom_core.formats.structs import CURRENT_VERSION, TraceHeader
from loom_core.formats.tolerant import (
    decode_cause,
    decode_struct,
    decode_value,
    escaped_surrogates,
    lenient_json,
    nesting_cause,
    surrogate_cause,
    validated,
    with_headroom,
)

_top_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])
_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])
_generic = msgspec.json.Decoder()
_BULK = ("log", "wire")


_log_decoder: msgspec.json.Decoder[list[Any]] = msgspec.json.Decoder(list_of(FastEffect))
MAX_WARNINGS = 20


def _decode_log(path: str, raw_log: msgspec.Raw, problems: list[str]) -> list[Any]:
    """Decode ``log`` straight into structs; on any problem redo it entry by entry.

    The fast path is one C-level pass. The slow path exists for files loom-harness
    tolerates (non-object items are skipped, wrongly typed fields read as defaults).
    """
    try:
        return _log_decoder.decode(raw_log)
    except msgspec.ValidationError:
        pass
    try:
        raws = _list_decoder.decode(raw_log)
    except msgspec.ValidationError as err:
        raise LoadError(path, "not a loom trace ('log' is not a list)") from err
    return [e for e in decode_entries(path, raws, 0, problems) if e is not None]


def decode_entries(
    path: str, raws: list[msgspec.Raw], start: int = 0, problems: list[str] | None = None
) -> list[Any]:
    """Decode raw log entries one by one (``None`` for the non-objects loom skips).

    An entry with a wrongly typed field is read field by field (see
    :func:`tolerant.decode_struct`); what was wrong goes to ``problems``.
    """
    dec = decoder(FastEffect)
    effects: list[Any] = []
    for i, raw in enumerate(raws):
        try:
            effects.append(dec.decode(raw))
        except msgspec.ValidationError:
            if bytes(memoryview(raw)[:1]) != b"{":
                effects.append(None)  # loom skips non-object items; so do we
                continue
            effects.append(_tolerant_entry(raw, f"log[{start + i}]", problems))
        except RecursionError:
            raise LoadError(path, f"JSON nested too deeply in log[{start + i}]") from None
    return effects


def _tolerant_entry(raw: msgspec.Raw, label: str, problems: list[str] | None) -> Any:
    """One entry read field by field, its problems named by seq when the seq is sound."""
    found: list[str] = []
    effect = decode_struct(raw, FastEffect, found)
    if not any("'seq'" in p for p in found):
        label = f"seq {effect.seq or 0}"
    if problems is not None:
        problems.extend(f"{label}: {p}" for p in found)
    return effect


def with_problems(warnings: tuple[str, ...], problems: list[str]) -> tuple[str, ...]:
    """Warnings plus the first problems found (a broken file must not flood the UI)."""
    shown = problems[:MAX_WARNINGS]
    if len(problems) > MAX_WARNINGS:
        shown.append(f"... and {len(problems) - MAX_WARNINGS} more field(s) with the wrong type")
    return warnings + tuple(shown)


def _header(path: str, top: dict[str, msgspec.Raw], problems: list[str]) -> TraceHeader:
    small = {k: decode_value(v) for k, v in top.items() if k not in _BULK}
    return validated(TraceHeader, small, path, problems, top)


def _decode_top(data: bytes, path: str, problems: list[str]) -> dict[str, msgspec.Raw]:
    try:
        return with_headroom(_top_decoder.decode, data)
    except RecursionError:
        raise LoadError(path, nesting_cause(data)) from None
    except msgspec.DecodeError as err:
        if "Expected `object`" in str(err):
            raise LoadError(path, "not a loom trace (the JSON is not an object)") from err
        return _lenient_top(data, path, err, problems)


def _lenient_top(
    data: bytes, path: str, err: msgspec.DecodeError, problems: list[str]
) -> dict[str, msgspec.Raw]:
    """Read what msgspec refuses and Python's json (so loom-harness) reads: NaN/Infinity
    (read as null) and lone surrogate escapes (shown as their escape, and named)."""
    try:
        value = lenient_json(data)
    except RecursionError:
        raise LoadError(path, nesting_cause(data)) from None
    except ValueError:
        raise LoadError(path, decode_cause(err, data)) from err
    if not isinstance(value, dict):
        raise LoadError(path, "not a loom trace (the JSON is not an object)") from err
    lone = surrogate_cause(data)
    if lone is not None:
        value = escaped_surrogates(value)
        problems.append(f"{lone}, shown as its escape (no text can hold it)")
    import json

    try:
        return _top_decoder.decode(json.dumps(value).encode())
    except (msgspec.DecodeError, RecursionError):  # what Python read, msgspec still cannot
        raise LoadError(path, decode_cause(err, data)) from err


def parse_top(
    data: bytes, path: str
) -> tuple[dict[str, msgspec.Raw], TraceHeader, tuple[str, ...]]:
    """Split a trace into raw members and validate everything but ``log``/``wire``."""
    problems: list[str] = []
    top = _decode_top(data, path, problems)
    if "log" not in top:
        raise LoadError(path, "not a loom trace (no 'log' member)")
    try:
        header = _header(path, top, problems)
    except RecursionError:
        raise LoadError(path, nesting_cause(data)) from None
    if header.version > CURRENT_VERSION:
        raise LoadError(
            path,
            f"written by a newer loom (trace version {header.version}; "
            f"this reader knows up to {CURRENT_VERSION})",
        )
    warnings: tuple[str, ...] = ()
    if header.version < CURRENT_VERSION:
        warnings = (
            f"trace version {header.version} (current {CURRENT_VERSION}): "
            "model effect keys were computed without tool schemas",
        )
    return top, header, warnings + tuple(problems)


def assemble(
    data: bytes,
    path: str,
    top: dict[str, msgspec.Raw],
    header: TraceHeader,
    effects: Sequence[Any],
    warnings: tuple[str, ...],
) -> Document:
    """The :class:`Document` of a parsed trace."""
    try:
        wire = _list_decoder.decode(top["wire"]) if "wire" in top else None
    except msgspec.ValidationError:  # not a list: loom never reads it back either
        wire = None
    return Document(
        path=path,
        format="trace",
        header=header,
        effects=effects,
        wire=wire,
        source=data,
        warnings=warnings,
    )


def load_trace_bytes(data: bytes, path: str) -> Document:
    """Parse a trace document from ``data``; ``path`` is only used in messages."""
    with gc_paused():
        top, header, warnings = parse_top(data, path)
        problems: list[str] = []
        try:
            effects = _decode_log(path, top["log"], problems)
        except RecursionError:
            raise LoadError(path, nesting_cause(data)) from None
        return assemble(data, path, top, header, effects, with_problems(warnings, problems))


def source_dict(doc: Document) -> dict[str, Any]:
    """The whole trace as plain values, decoded from the original bytes (lossless)."""
    if doc.source is None:
        raise ValueError("document has no source bytes")
    top: dict[str, Any]  # a loaded trace's top level is an object (checked on load)
    with gc_paused():
        try:
            top = _generic.decode(doc.source)
        except msgspec.DecodeError:
            import json  # NaN/Infinity: Python's json accepts what loom wrote

            top = json.loads(bytes(doc.source))  # (a mapped file is no bytes to json)
    return top


def checksum_state(doc: Document, computed: str | None = None) -> str:
    """``valid`` / ``mismatch`` / ``absent`` as §2.2 defines them.

    Costs a full decode and canonical re-serialisation, which is why the GUI runs
    it in the background after the first screen.
    """
    stored = doc.header.checksum
    if doc.format != "trace" or not stored:
        return "absent"
    if computed is None and doc.source is not None:
        computed = parallel_checksum(doc.source)
    if computed is None:
        computed = checksum(source_dict(doc))
    return "valid" if computed == stored else "mismatch"
