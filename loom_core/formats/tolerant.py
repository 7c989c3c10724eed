"""The slow path of every reader: what to do when the fast decoders refuse a file.

One rule for all readers (issue 12): any JSON value in any field is accepted; a
value of the wrong type is left at the field's default, kept raw in the entry's
bytes, and reported as a warning that shows it. What cannot be read at all (bad
JSON, nesting deeper than the interpreter's stack, a lone surrogate escape) is
refused with a cause in words and where it is (member, line or seq).

Nothing here runs on the fast path: the loaders call it only after a C-level
decode failed, so a clean file costs nothing extra.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

import msgspec

from loom_core.errors import LoadError
from loom_core.formats.header import S, build, checked

T = TypeVar("T")

_members = msgspec.json.Decoder(dict[str, msgspec.Raw])
_generic = msgspec.json.Decoder()
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_ESCAPE = re.compile(rb"\\(u[0-9a-fA-F]{4}|.)", re.S)  # one escape; "\\\\" is one too
_BYTE = re.compile(r"\(byte (\d+)\)")
_LONE = re.compile("[\ud800-\udfff]")  # in text Python's json decoded: only lone ones are left
DEEP = 500  # where the nesting scan reports a file as too deep (see with_headroom)
HEADROOM = 150  # stack frames kept free when a document is first scanned


def with_headroom(decode: Callable[[bytes], T], data: bytes) -> T:
    """``decode(data)`` called HEADROOM frames deeper than here.

    Why: the decoders' nesting limit is the interpreter's stack (about 1000 frames
    minus the caller's depth), so a value near it could load in one place and raise
    RecursionError later in a view running deeper (a Qt slot, a test). Scanning a
    document first with this headroom decides once, at load, what is too deep; the
    padding costs microseconds, so it is done once per document, not per value. (A
    module-level function, not a nested one calling itself: that closure was a reference
    cycle holding ``data``, a whole trace's bytes, until the cyclic collector ran, which
    the window runs only from a timer: a live tab's every re-read kept its bytes a while.)
    """
    return _down(decode, data, HEADROOM)


def _down(decode: Callable[[bytes], T], data: bytes, n: int) -> T:
    return decode(data) if n <= 0 else _down(decode, data, n - 1)


def maybe_deep(line: bytes) -> bool:
    """Whether a line could nest deeper than DEEP (cheap: C-speed counts on long lines)."""
    return len(line) > 2 * DEEP and line.count(b"[") + line.count(b"{") > DEEP


_LINES_WINDOW = 1 << 24  # bytes counted at a time in a buffer that has no ``count``


def line_of(data: bytes, offset: int) -> int:
    """1-based line number of a byte offset, in bytes or in a mapped file (which has no
    ``count``: its newlines are counted a window at a time, never copied whole)."""
    if isinstance(data, bytes | bytearray):
        return data.count(b"\n", 0, offset) + 1
    windows = range(0, offset, _LINES_WINDOW)
    return sum(data[a : min(a + _LINES_WINDOW, offset)].count(b"\n") for a in windows) + 1


def nesting_cause(data: bytes, base_line: int = 0) -> str:
    """Words for a RecursionError: how deep, and the member and line where it happens."""
    depth, member, last = 0, "", b""
    for token in _TOKENS.finditer(data):
        text = token.group()
        if text[:1] == b'"':
            if depth == 1:
                last = text
            continue
        if text in (b"[", b"{"):
            depth += 1
            if depth == 2:
                member = last.decode("utf-8", "replace").strip('"')
            if depth > DEEP:
                where = f" in member '{member}'" if member else ""
                line = base_line or line_of(data, token.start())
                return f"JSON nested too deeply (over {DEEP} levels){where} at line {line}"
        else:
            depth -= 1
    return "JSON nested too deeply for this reader"


def surrogate_cause(data: bytes) -> str | None:
    """Words for a lone UTF-16 surrogate escape (``\\ud800``), which no UTF-8 text can hold.

    Escapes are read in order (an escaped backslash is one escape), so ``\\\\ud800`` is
    text, and a high surrogate counts as paired only when a low one follows at once.
    """
    pending: re.Match[bytes] | None = None
    for found in _ESCAPE.finditer(data):
        esc = found.group(1)
        code = int(esc[1:], 16) if len(esc) == 5 else -1
        if pending is not None:
            if found.start() == pending.end() and 0xDC00 <= code <= 0xDFFF:
                pending = None
                continue
            break
        if 0xD800 <= code <= 0xDBFF:
            pending = found
        elif 0xDC00 <= code <= 0xDFFF:
            pending = found
            break
    if pending is None:
        return None
    escape = pending.group().decode()
    return (
        f"a lone surrogate escape ({escape}) in a string at line {line_of(data, pending.start())}"
    )


def _escape_text(text: str) -> str:
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def escaped_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) as the text of its escape.

    Why: Python's json reads ``"\\ud800"``, and so loom-harness loads such a file; but no
    UTF-8 text, msgspec, Qt or terminal can hold the character. Shown as the six
    characters of its escape, the value is visible and every view and command takes it;
    the file's own bytes stay the document's source (its checksum and a save read them).
    Iterative: the value may be nested as deep as a file is allowed to be.
    """
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        item = holder[key]
        if isinstance(item, str):
            holder[key] = _escape_text(item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            holder[key] = item = {_escape_text(k): v for k, v in item.items()}
            stack.extend((item, k) for k in item)
    return root[0]


def surrogates_escaped(data: bytes) -> bytes | None:
    """``data`` (a journal line) re-encoded with its lone surrogates shown as their escapes
    (see :func:`escaped_surrogates`); None when it has none, or is not JSON for Python."""
    if surrogate_cause(data) is None:
        return None
    try:
        value = lenient_json(data)
    except (ValueError, RecursionError):
        return None
    return json.dumps(escaped_surrogates(value)).encode()


def decode_cause(err: Exception, data: bytes) -> str:
    """A decoder error as a short cause with its line (msgspec names a byte offset)."""
    text = str(err)
    if "truncated" in text:
        return surrogate_cause(data) or "the file ends early (truncated JSON)"
    found = _BYTE.search(text)
    where = f" at line {line_of(data, int(found.group(1)))}" if found else ""
    if "out of range" in text:
        return f"number out of range{where}"
    text = _BYTE.sub("", text).replace("JSON is malformed: ", "").strip()
    return surrogate_cause(data) or f"not valid JSON ({text}{where})"


def show(raw: bytes, limit: int = 60) -> str:
    """A raw JSON value as the user wrote it, clipped for one line."""
    text = " ".join(bytes(raw).decode("utf-8", "replace").split())
    return text if len(text) <= limit else text[:limit] + "…"


def _why(err: Exception, raw: bytes) -> str:
    if "out of range" in str(err):
        return f"is a number out of range ({show(raw, 24)})"
    return f"has the wrong type, shown raw: {show(raw)}"


@cache
def _field_decoder(tp: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(tp)


def _struct_in(tp: Any) -> Any:
    """The struct type inside ``Struct | None``, if any."""
    for arg in getattr(tp, "__args__", (tp,)):
        if isinstance(arg, type) and issubclass(arg, msgspec.Struct):
            return arg
    return None


def decode_struct(raw: bytes, struct: Any, problems: list[str], prefix: str = "") -> Any:
    """Decode an object into ``struct`` field by field; wrongly typed fields keep their
    default and are described in ``problems`` (``prefix`` names an enclosing field).

    Raises msgspec.DecodeError / ValidationError only when ``raw`` is not an object.
    """
    members = _members.decode(raw)
    values = {}
    for f in msgspec.structs.fields(struct):
        if f.encode_name not in members:
            continue
        member = members[f.encode_name]
        if f.type is msgspec.Raw:
            values[f.name] = member
            continue
        try:
            values[f.name] = _field_decoder(f.type).decode(member)
        except msgspec.ValidationError as err:
            nested = _struct_in(f.type)
            if nested is not None and bytes(memoryview(member)[:1]) == b"{":
                values[f.name] = decode_struct(member, nested, problems, f"{prefix}{f.name}.")
            else:
                problems.append(f"field '{prefix}{f.encode_name}' {_why(err, member)}")
    return struct(**values)


def decode_value(raw: bytes) -> Any:
    """Any JSON value; numbers msgspec refuses as out of range read as Python does (inf)."""
    try:
        return _generic.decode(raw)
    except msgspec.ValidationError:
        return json.loads(bytes(raw))


def _finite_problem(value: Any) -> bool:
    return isinstance(value, float) and value - value != 0


def validated(
    struct: type[S],
    values: dict[str, Any],
    path: str,
    problems: list[str],
    raws: dict[str, Any] | None = None,
    where: str = "member",
) -> S:
    """``struct`` from ``values`` (a header's members, checked as :mod:`header` says); a
    wrongly typed member is dropped and described in ``problems``, except ``version``,
    without which the file cannot be read safely (a null one reads as absent)."""
    values = dict(values)
    if "version" in values and values["version"] is None:
        del values["version"]
    for name in checked(struct, values)[1]:
        raw = raws[name] if raws is not None else json.dumps(values[name]).encode()
        huge = _finite_problem(values[name])
        if name == "version":
            raise LoadError(
                path,
                f"number out of range in {where} 'version'"
                if huge
                else f"wrong type in {where} 'version': {show(raw)}",
            )
        problems.append(
            f"{where} '{name}' "
            + (
                f"is a number out of range ({show(raw, 24)})"
                if huge
                else f"has the wrong type, shown raw: {show(raw)}"
            )
        )
        del values[name]
    return build(struct, values)


def lenient_json(data: bytes) -> Any:
    """Python's json for what msgspec refuses (NaN, Infinity, 1e400): non-finite numbers
    read as null, as loom-harness's files with them are read by most tools."""

    def finite(text: str) -> float | None:
        value = float(text)
        return value if value - value == 0 else None

    text = data if isinstance(data, bytes | bytearray | str) else bytes(data)  # (mapped)
    return json.loads(text, parse_constant=lambda _c: None, parse_float=finite)
