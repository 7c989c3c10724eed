"""A run of Anthropic text deltas is folded as one event (``sse_bulk.parse_events``).

Why these checks: the run path joins the deltas' JSON strings and decodes them once,
so it must give exactly what decoding and folding every delta gives -- for every
spelling the API or a test server uses, every string escape, and the strings that
do not decode alone (those must take the event-by-event path) -- and the final
event's offset must stay the same, whatever the chunking.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from loom.proxy import reconstruct_sse

from loom_core.proxy.reconstruct import StreamReconstructor
from loom_core.proxy.sse_bulk import decode_all, parse_events, split_events
from loom_core.proxy.stream_acc import AnthropicStream

HEAD = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x"}


def _event(name: str, data: dict[str, Any], compact: bool) -> bytes:
    text = json.dumps(data, separators=(",", ":") if compact else None)
    return f"event: {name}\ndata: {text}\n\n".encode()


def stream(pieces: list[tuple[int, str]], compact: bool = True, names: bool = True) -> bytes:
    """A message whose text blocks get ``pieces`` as (block index, delta text)."""
    blocks = sorted({i for i, _ in pieces})
    start = {**HEAD, "content": [], "stop_reason": None, "usage": {"input_tokens": 5}}
    out = [_event("message_start", {"type": "message_start", "message": start}, compact)]
    out += [
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "text", "text": ""},
            },
            compact,
        )
        for i in blocks
    ]
    out += [
        _event(
            "content_block_delta",
            {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": t}},
            compact,
        )
        for i, t in pieces
    ]
    out += [
        _event(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
            compact,
        ),
        _event("message_stop", {"type": "message_stop"}, compact),
    ]
    raw = b"".join(out)
    if names:
        return raw
    return b"".join(e.split(b"\n", 1)[1] + b"\n\n" for e in raw.split(b"\n\n")[:-1])


def one_by_one(raw: bytes) -> tuple[dict[str, Any], int]:
    """The fold of every event decoded alone: what the run path must equal."""
    payloads, starts, _ = split_events(raw, 0)
    acc = AnthropicStream()
    end = acc.feed_all(decode_all(payloads))
    return acc.result(), starts[end]


def whole(raw: bytes, size: int) -> tuple[dict[str, Any], int | None]:
    rec = StreamReconstructor("/v1/messages")
    for i in range(0, len(raw), size):
        rec.feed(raw[i : i + size])
    rec.close()
    return rec.result(), rec.terminal_at


WORDS = [(0, f"word{i} ") for i in range(40)]
ESCAPES = [(0, 'a "quoted" \\ back\\slash'), (0, "tab\tnew\nline \x01"), (0, "é ☀ naïve 😀 \x7f")]


@pytest.mark.parametrize("compact", [True, False])
@pytest.mark.parametrize("names", [True, False])
def test_a_run_is_one_event_with_the_whole_text(compact: bool, names: bool) -> None:
    raw = stream(WORDS, compact, names)
    events, starts, used = parse_events(raw, 0)
    assert used == len(raw) and len(events) == 5  # start, block start, ONE delta, 2 more
    assert events[2]["delta"]["text"] == "".join(t for _, t in WORDS)
    assert starts[2] == split_events(raw, 0)[1][2]  # the first delta's start
    assert (AnthropicStream().feed_all(events), starts[-1]) == (4, one_by_one(raw)[1])


@pytest.mark.parametrize(
    "pieces",
    [
        WORDS,
        ESCAPES,
        [(0, "a"), (1, "b"), (1, "c"), (0, "d"), (0, "e"), (2, "f")],  # blocks interleaved
        [(0, "")] * 3 + [(0, "x")],  # empty deltas
        [(0, "\ud83d"), (0, "\ude00"), (0, "after")],  # a pair split across two deltas
        [(0, "ok"), (0, "\udc00 lone"), (0, "more")],  # a lone surrogate
    ],
)
@pytest.mark.parametrize("compact", [True, False])
def test_the_run_path_folds_what_one_by_one_folds(
    pieces: list[tuple[int, str]], compact: bool
) -> None:
    raw = stream(pieces, compact)
    expected = one_by_one(raw)
    for size in (1, 3, 17, 64, len(raw)):
        assert whole(raw, size) == expected, size
    if not any("\ud800" <= c <= "\udfff" for _, t in pieces for c in t):  # (loom-harness
        assert whole(raw, len(raw))[0] == reconstruct_sse(raw.decode())  # keeps lone halves)


@pytest.mark.parametrize(
    "odd",
    [
        b"bad \xff utf-8",  # invalid UTF-8: each event decodes alone (with replacement)
        b"raw \x01 control",  # not JSON: the event is dropped, the others kept
        b"bad escape \\x",
    ],
)
def test_a_string_that_does_not_decode_alone_takes_the_event_path(odd: bytes) -> None:
    raw = stream([(0, "one "), (0, "@@"), (0, " two")]).replace(b"@@", odd)
    expected = one_by_one(raw)
    for size in (1, 5, len(raw)):
        assert whole(raw, size) == expected, size


def test_deltas_that_are_not_the_plain_shape_are_decoded_one_by_one() -> None:
    raw = stream([(0, "a"), (0, "b"), (0, "c")])
    odd = raw.replace(b'"text":"b"}', b'"text":"b","x":1}', 1)  # an extra member
    odd = odd.replace(
        b'"index":0,"delta":{"type":"text_delta","text":"c"',
        b'"index":0,"delta":{"text":"c","type":"text_delta"',
        1,
    )
    events, _, _ = parse_events(odd, 0)
    assert [e.get("delta", {}).get("text") for e in events[2:5]] == ["a", "b", "c"]
    assert whole(odd, 1) == one_by_one(odd)
    assert one_by_one(odd)[0]["content"][0]["text"] == "abc"
