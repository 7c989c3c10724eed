"""Hypothesis strategies: valid loom documents built from the schema, then broken on purpose.

Why from the schema: ``loom_core.formats.schema`` is the one description of the formats, so
the valid documents follow it field by field (a new field there is fuzzed here too).
The mutation families are the ones a real fuzzer found crashes in (issue 12): wrong
types at any field path, numbers out of range, deep nesting, bad string escapes and
encodings, truncation, duplicate keys, and torn or reordered journal lines.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

from loom_core.formats import schema
from tests.core.fuzz.otlp_docs import otlp_requests

HOLE = "@@loom-fuzz-hole@@"  # a string value replaced by raw JSON text after dumping
TOOL_NAMES = ("search", "bash", "get_weather")
KINDS = (
    "model",
    "model",
    "model",
    "tool:search",
    "tool:bash",
    "tool:get_weather",
    "human",
    "time",
    "memory",
    "compact",
    "edit",
    "sample",
    "choose",
    "critic",
    "",
)
FAMILIES = (
    "types",
    "numbers",
    "nesting",
    "strings",
    "encodings",
    "truncation",
    "duplicates",
    "journal_lines",
)

leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _for(annotation: Any) -> st.SearchStrategy[Any]:
    """A strategy for values of one pydantic annotation."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([_for(a) for a in typing.get_args(annotation)])
    if annotation is type(None):
        return st.none()
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return st.integers(0, 5000)
    if annotation is float:
        return st.floats(0, 1e9, allow_nan=False)
    if annotation is str:
        return st.text(max_size=40)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return from_model(annotation)
    if origin is list:
        return st.lists(_for(typing.get_args(annotation)[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(
            st.text(max_size=10), _for(typing.get_args(annotation)[1]), max_size=3
        )
    return json_values


def from_model(model: type[BaseModel], **fixed: st.SearchStrategy[Any]) -> st.SearchStrategy[dict]:
    """Objects of ``model``: each field present or not, ``fixed`` ones always present."""
    optional = {
        name: _for(f.annotation) for name, f in model.model_fields.items() if name not in fixed
    }
    return st.fixed_dictionaries(fixed, optional=optional)


tool_calls = st.lists(
    from_model(
        schema.ToolCall,
        name=st.sampled_from(TOOL_NAMES),
        id=st.text("abc123", min_size=1, max_size=6),
        input=st.dictionaries(st.text(max_size=6), json_values, max_size=2),
    ),
    max_size=2,
)
model_results = from_model(
    schema.ModelResult,
    text=st.text(max_size=60),
    tool_calls=tool_calls,
    usage=from_model(schema.Usage),
)


def _result(kind: str) -> st.SearchStrategy[Any]:
    if kind in ("model", "sample"):
        return model_results
    if kind in schema.RESULT_MODELS:
        return _for(schema.RESULT_MODELS[kind])
    if kind == "time":
        return st.floats(0, 2e9)
    if kind.startswith("tool:"):
        return st.text(max_size=80) | json_values | st.just("ERROR: boom")
    return st.text(max_size=60)


@st.composite
def effects(draw: st.DrawFn, seq: int) -> dict[str, Any]:
    """One log entry of a plausible kind, its result shaped per kind (§1.3)."""
    kind = draw(st.sampled_from(KINDS))
    meta = draw(st.none() | from_model(schema.EffectMeta))
    entry = {
        "seq": seq,
        "kind": kind,
        "key": draw(st.text("0123456789abcdef", min_size=12, max_size=12)),
        "result": draw(_result(kind)),
        "depth": draw(st.sampled_from((0, 0, 0, 1, 2))),
    }
    if meta is not None:
        entry["meta"] = meta
    return entry


@st.composite
def logs(draw: st.DrawFn, max_size: int = 8) -> list[dict[str, Any]]:
    n = draw(st.integers(0, max_size))
    return [draw(effects(i)) for i in range(n)]


@st.composite
def traces(draw: st.DrawFn) -> dict[str, Any]:
    """A trace document: header members from ``TraceHeader``, then ``log`` (and ``wire``)."""
    header = draw(
        from_model(
            schema.TraceHeader,
            version=st.sampled_from((1, 2, 2)),
            shield_events=st.lists(from_model(schema.ShieldEvent), max_size=2),
        )
    )
    header.pop("checksum", None)
    doc = {**header, "log": draw(logs())}
    if draw(st.booleans()):
        doc["recorded_via"] = "proxy"
        doc["wire"] = draw(st.lists(json_values, max_size=2))
    return doc


@st.composite
def journals(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Journal lines: a header, then an intent (usually) and an effect per step (§5.1)."""
    lines: list[dict[str, Any]] = [
        {**draw(from_model(schema.JournalHeader, version=st.just(1), type=st.just("header")))}
    ]
    for entry in draw(logs()):
        if draw(st.booleans()):
            lines.append(
                {"type": "intent", **{k: entry[k] for k in ("seq", "kind", "key", "depth")}}
            )
        lines.append({"type": "effect", **entry})
    if draw(st.booleans()):
        lines.append({"type": "intent", "seq": len(lines), "kind": "human", "key": "k", "depth": 0})
    return lines


def _wire_exchanges() -> list[dict[str, Any]]:
    from tests.core.formats.test_wirelog import anthropic_exchanges, openai_exchanges

    return anthropic_exchanges() + openai_exchanges()


@st.composite
def wirelogs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Exchanges of both wire dialects (real shapes, from the wirelog tests)."""
    pool = _wire_exchanges()
    return draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))


# -- serialising ------------------------------------------------------------------------
def dump(kind: str, value: Any, pretty: bool = True) -> bytes:
    """Bytes as loom writes them: an indented trace, or one JSON object per line (an OTLP
    request is one object, indented or on one line, as producers write it)."""
    if kind in ("trace", "otlp"):
        return json.dumps(value, indent=2 if pretty else None).encode()
    return b"".join(json.dumps(v).encode() + b"\n" for v in value)


documents = st.one_of(
    traces().map(lambda d: ("trace", d)),
    journals().map(lambda d: ("journal", d)),
    wirelogs().map(lambda d: ("wirelog", d)),
    otlp_requests().map(lambda d: ("otlp", d)),
)


# -- mutations --------------------------------------------------------------------------
def paths(value: Any, prefix: tuple = (), limit: int = 400) -> list[tuple]:
    """Every path (keys and indexes) into a decoded document, the root excluded."""
    out: list[tuple] = []
    stack = [(prefix, value)]
    while stack and len(out) < limit:
        here, node = stack.pop()
        children = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, child in children:
            out.append(here + (key,))
            stack.append((here + (key,), child))
    return out


def replaced(value: Any, path: tuple, new: Any) -> Any:
    """A copy of ``value`` with the node at ``path`` replaced by ``new``."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: replaced(value[head], rest, new)}
    copy = list(value)
    copy[head] = replaced(copy[head], rest, new)
    return copy


def _holed(kind: str, value: Any, path: tuple, text: str, pretty: bool) -> bytes:
    """Dump with the node at ``path`` replaced by raw JSON ``text`` (even invalid JSON)."""
    data = dump(kind, replaced(value, path, HOLE), pretty)
    return data.replace(json.dumps(HOLE).encode(), text.encode("utf-8", "surrogatepass"), 1)


WRONG = (
    None,
    True,
    False,
    0,
    -1,
    2**70,
    1.5,
    -0.0,
    "",
    "x",
    "12",
    [],
    {},
    [1, "a"],
    {"a": 1},
    [[]],
    {"text": 5},
    [None],
)
HUGE = (
    "1e400",
    "-1e400",
    "1e-400",
    "1" + "0" * 400,
    "-" + "9" * 330,
    "NaN",
    "Infinity",
    "-Infinity",
    "1.7976931348623157e309",
    "123456789012345678901234567890",
    "-0",
    "1E+999",
)
BAD_STRINGS = (
    '"\\ud800"',
    '"\\udfff"',
    '"a\\ud800b"',
    '"\\udc00\\ud800"',
    '"\\u0000"',
    '"\\x41"',
    '"\\u12"',
    '"tab\there"',
    '"\\uD83D"',
    '"\\"',
    '"\u2028"',
    '"\\ud83d\\ude00"',
)


def nested(depth: int, shape: str) -> str:
    if shape == "list":
        return "[" * depth + "]" * depth
    if shape == "dict":
        return '{"a": ' * depth + "1" + "}" * depth
    return '[{"a": ' * (depth // 2) + "0" + "}]" * (depth // 2)


@st.composite
def mutated(
    draw: st.DrawFn, family: str, bases: st.SearchStrategy[tuple[str, Any]] = documents
) -> bytes:
    """A document of any format broken the way ``family`` says (see FAMILIES).

    ``bases`` supplies the valid documents (the long run draws from a pool: building
    documents costs more than breaking them)."""
    kind, value = draw(
        bases if family != "journal_lines" else bases.filter(lambda b: b[0] == "journal")
    )
    pretty = draw(st.booleans())
    where = paths(value)
    if family in ("types", "numbers", "nesting", "strings", "duplicates") and where:
        path = draw(st.sampled_from(where))
        if family == "types":
            return dump(kind, replaced(value, path, draw(st.sampled_from(WRONG))), pretty)
        if family == "numbers":
            return _holed(kind, value, path, draw(st.sampled_from(HUGE)), pretty)
        if family == "nesting":
            depth = draw(st.sampled_from((100, 500, 900, 990, 1000, 1100, 3000, 20000)))
            return _holed(
                kind,
                value,
                path,
                nested(depth, draw(st.sampled_from(("list", "dict", "mixed")))),
                pretty,
            )
        if family == "strings":
            return _holed(kind, value, path, draw(st.sampled_from(BAD_STRINGS)), pretty)
        return _duplicated(draw, kind, value, pretty)
    data = dump(kind, value, pretty)
    if family == "encodings":
        return _encoded(draw, data)
    if family == "truncation":
        cut = draw(st.integers(0, len(data)))
        return (
            data[:cut]
            if draw(st.booleans())
            else data[:cut] + data[cut + draw(st.integers(1, 40)) :]
        )
    if family == "journal_lines":
        return _lines(draw, data)
    return data


def _duplicated(draw: st.DrawFn, kind: str, value: Any, pretty: bool) -> bytes:
    """An object at some path written with one of its members twice (the later one differs)."""
    objects = [p for p in paths(value) if isinstance(_at(value, p), dict) and _at(value, p)]
    if kind == "trace":
        objects.append(())
    if not objects:
        return dump(kind, value, pretty)
    path = draw(st.sampled_from(objects))
    node = _at(value, path) if path else value
    key = draw(st.sampled_from(sorted(node)))
    pairs = list(node.items()) + [(key, draw(st.sampled_from(WRONG)))]
    text = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs) + "}"
    if not path:
        return text.encode()
    return _holed(kind, value, path, text, pretty)


def _at(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


def _encoded(draw: st.DrawFn, data: bytes) -> bytes:
    how = draw(
        st.sampled_from(
            ("utf16", "utf16le", "bom", "latin1", "badbyte", "nul", "crlf", "utf32", "cr")
        )
    )
    text = data.decode()
    if how == "utf16":
        return text.encode("utf-16")
    if how == "utf16le":
        return text.encode("utf-16-le")
    if how == "utf32":
        return text.encode("utf-32")
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "crlf":
        return data.replace(b"\n", b"\r\n")
    if how == "cr":
        return data.replace(b"\n", b"\r")
    at = draw(st.integers(0, len(data)))
    junk = {
        "latin1": "é€ü".encode("latin-1", "replace"),
        "badbyte": draw(
            st.sampled_from((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"))
        ),
        "nul": b"\x00",
    }[how]
    return data[:at] + junk + data[at:]


def _lines(draw: st.DrawFn, data: bytes) -> bytes:
    """Journal lines torn, reordered, dropped, repeated or interleaved with junk."""
    lines = data.split(b"\n")[:-1]
    how = draw(st.sampled_from(("torn", "shuffle", "drop", "repeat", "junk", "headers", "blank")))
    if how == "torn" and lines:
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    elif how == "shuffle":
        lines = draw(st.permutations(lines))
    elif how == "drop" and lines:
        del lines[draw(st.integers(0, len(lines) - 1))]
    elif how == "repeat" and lines:
        i = draw(st.integers(0, len(lines) - 1))
        lines.insert(draw(st.integers(0, len(lines))), lines[i])
    elif how == "junk":
        lines.insert(
            draw(st.integers(0, len(lines))),
            draw(
                st.sampled_from(
                    (
                        b"{",
                        b"garbage",
                        b"[]",
                        b"null",
                        b'{"type": 5}',
                        b'{"type": "effect", "seq": "x"}',
                        b'{"type": "header", "version": "x"}',
                        b'"str"',
                    )
                )
            ),
        )
    elif how == "headers":
        lines.insert(draw(st.integers(0, len(lines))), b'{"type": "header", "version": 1}')
    else:
        lines.insert(draw(st.integers(0, len(lines))), b"   ")
    return b"\n".join(lines) + (b"\n" if draw(st.booleans()) else b"")
