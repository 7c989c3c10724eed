"""The bulk SSE parser and the reconstructor built on it (the relay's stream path).

Why these checks: the relay no longer parses each network read; it keeps the raw
bytes and parses them in bulk when a final-event marker may have come. Whatever
the chunking -- every byte boundary of real-shaped streams of the three dialects,
LF and CRLF, comments, multi-line ``data:``, a UTF-8 character cut in two, an
event without its blank line at EOF -- the reconstruction and the final event's
start offset must be those of feeding the stream whole, the events those of the
incremental :class:`SSEParser`, and the chunk that completes the final event must
be one the relay parses before sending (so it can hold those bytes).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from loom.proxy import reconstruct_openai_sse, reconstruct_sse

from loom_core.proxy import reconstruct as rc
from loom_core.proxy.reconstruct import StreamReconstructor, reconstruct
from loom_core.proxy.sse_bulk import DONE, decode_all, split_events, split_rest
from loom_core.proxy.stream_acc import AnthropicStream, ChatStream, ResponsesStream
from tests.core.proxy import fake_wire as fw
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.sse_reference import SSEParser

TURN = Reply(
    text="Zürich ☀ naïve — ok", usage=(50, 9), calls=[("t1", "search", {"city": "Zürich", "n": 2})]
)
PATHS = {"anthropic": "/v1/messages", "chat": "/v1/chat/completions", "responses": "/v1/responses"}
STREAMS = {
    "anthropic": b"".join(fw.anthropic_sse(TURN, 3, "claude-x")),
    "chat": b"".join(fw.chat_sse(TURN, 3, "gpt-x", usage=True)),
    "responses": b"".join(fw.responses_sse(TURN, 3, "gpt-x")),
}
FINAL = {
    "anthropic": b"event: message_stop",
    "chat": b"data: [DONE]",
    "responses": b"event: response.completed",
}


def variants(raw: bytes) -> dict[str, bytes]:
    """The same events in other legal spellings: CRLF, comments, split data lines."""
    events = raw.split(b"\n\n")[:-1]
    commented = b"".join(b": ka\n\n: keep-alive\n" + e + b"\n\n" for e in events)
    split_data = b"".join(e.replace(b"data: {", b"data: {\ndata:", 1) + b"\n\n" for e in events)
    return {
        "lf": raw,
        "crlf": raw.replace(b"\n", b"\r\n"),
        "comments": commented,
        "multiline": split_data,
        "blank_runs": raw.replace(b"\n\n", b"\n\n\n"),
    }


def whole(path: str, raw: bytes) -> tuple[Any, int | None, bool]:
    """(object, final event's offset, finished) for the stream fed in one piece."""
    rec = StreamReconstructor(path)
    rec.feed(raw)
    rec.close()
    return (rec.result() if rec.acc else None), rec.terminal_at, rec.finished


def in_chunks(path: str, chunks: list[bytes]) -> tuple[Any, int | None, bool]:
    rec = StreamReconstructor(path)
    offsets = [rec.feed(c) for c in chunks]
    first = next((i for i, o in enumerate(offsets) if o is not None), len(offsets))
    assert len(set(offsets[first:])) <= 1  # once known, the offset stays
    rec.close()
    return (rec.result() if rec.acc else None), rec.terminal_at, rec.finished


def reference_events(raw: bytes) -> list[tuple[str, int]]:
    """(data, start) of each event with non-empty data, from the incremental parser."""
    parser = SSEParser()
    return [(e.data, e.start) for e in parser.feed(raw) + parser.close() if e.data]


# --------------------------------------------------------------------------- chunking


@pytest.mark.parametrize("dialect", sorted(PATHS))
@pytest.mark.parametrize("variant", ["lf", "crlf", "comments", "multiline", "blank_runs"])
def test_every_two_chunk_split_gives_the_whole_stream_result(dialect: str, variant: str) -> None:
    raw = variants(STREAMS[dialect])[variant]
    path = PATHS[dialect]
    expected = whole(path, raw)
    final = b": keep-alive\n" + FINAL[dialect] if variant == "comments" else FINAL[dialect]
    assert expected[2] and expected[1] == raw.rindex(final)  # a comment line starts an event
    for cut in range(1, len(raw)):
        assert in_chunks(path, [raw[:cut], raw[cut:]]) == expected, cut
    assert in_chunks(path, [raw[i : i + 1] for i in range(len(raw))]) == expected
    assert whole(path, STREAMS[dialect])[0] == expected[0]  # every spelling: the same object


def test_the_objects_are_the_non_streamed_answers_and_loom_harness_agrees() -> None:
    anthropic, _, _ = whole(PATHS["anthropic"], STREAMS["anthropic"])
    assert anthropic == fw.anthropic_json(TURN, 3, "claude-x")
    assert anthropic == reconstruct_sse(STREAMS["anthropic"].decode())
    chat, _, _ = whole(PATHS["chat"], STREAMS["chat"])
    assert {k: v for k, v in chat.items() if k not in ("id", "created")} == reconstruct_openai_sse(
        STREAMS["chat"].decode()
    )
    responses, _, _ = whole(PATHS["responses"], STREAMS["responses"])
    assert responses == fw.responses_json(TURN, 3, "gpt-x")
    assert anthropic["content"][0]["text"] == "Zürich ☀ naïve — ok"  # no UTF-8 mangled


@pytest.mark.parametrize("dialect", sorted(PATHS))
def test_the_chunk_completing_the_final_event_is_parsed_before_it_is_sent(dialect: str) -> None:
    """Simulate the relay (add, then parse only when add says so) at every chunking."""
    raw = STREAMS[dialect]
    final_end = len(raw)  # the final event is the last one in these streams
    for size in (1, 2, 3, 5, 7, 11, 64, 200, len(raw)):
        for shift in range(0, min(size, 6)):
            chunks = [raw[:shift]] * bool(shift) + [
                raw[i : i + size] for i in range(shift, len(raw), size)
            ]
            rec, sent, terminal = StreamReconstructor(PATHS[dialect]), 0, None
            for chunk in chunks:
                if rec.add(chunk):
                    terminal = rec.parse()
                    if terminal is not None:
                        break
                sent += len(chunk)  # sent without being parsed
            assert terminal == raw.rindex(FINAL[dialect]), (size, shift)
            assert sent < final_end  # the end of the final event was not sent yet


def test_bytes_without_a_marker_are_not_parsed_while_relayed() -> None:
    raw = STREAMS["anthropic"]
    cut = raw.rindex(b"event: message_delta")
    head, tail = raw[:cut], raw[cut:]
    rec = StreamReconstructor(PATHS["anthropic"])
    assert [rec.add(head[i : i + 40]) for i in range(0, len(head), 40)] == [False] * len(
        range(0, len(head), 40)
    )
    assert rec.acc is not None  # the first event, decoded at once: it names the dialect,
    assert rec._base < raw.index(b"event: content_block_start")  # nothing after it yet
    assert rec.add(tail) and rec.parse() == raw.rindex(b"event: message_stop")
    assert rec.result() == fw.anthropic_json(TURN, 3, "claude-x")
    assert rec.add(b"event: ping\ndata: {}\n\n") is False  # after the end: only counted
    assert rec.size == len(raw) + 22


def test_once_the_dialect_is_known_only_its_own_markers_are_searched() -> None:
    """An Anthropic stream ends at message_stop or an error, never at [DONE] or a
    Responses event: text naming those is relayed without a parse."""
    raw = STREAMS["anthropic"]
    first = raw.index(b"\n\n") + 2
    rec = StreamReconstructor(PATHS["anthropic"])
    assert rec.add(raw[:first]) is False and rec.acc is None  # the first read: sent as is
    assert rec.add(b"event: ping\ndata: {}\n\n") is False and rec.acc is not None
    other = b'event: ping\ndata: {"note": "[DONE] response.completed response.failed"}\n\n'
    assert rec.add(other) is False
    assert rec.add(b'event: ping\ndata: {"note": "an error"}\n\n') is True
    chat = StreamReconstructor(PATHS["chat"])
    head = STREAMS["chat"][: STREAMS["chat"].index(b"\n\n") + 2]
    assert chat.add(head) is False and chat.add(b'data: {"choices": []}\n\n') is False
    assert chat.dialect == "openai"
    assert chat.add(b'data: {"choices": [], "note": "message_stop error"}\n\n') is False
    assert chat.add(b"data: [DONE]\n\n") is True and chat.parse() is not None


def test_a_long_stream_without_markers_is_parsed_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rc, "_EAGER", 100)  # parse whatever exceeds 100 unparsed bytes
    raw = STREAMS["anthropic"]
    expected = whole(PATHS["anthropic"], raw)
    for size in (1, 7, 64):
        rec = StreamReconstructor(PATHS["anthropic"])
        for i in range(0, len(raw), size):
            rec.feed(raw[i : i + size])
            assert len(rec._buf) <= 100 + size + 400  # at most one event kept past the limit
        rec.close()
        assert (rec.result(), rec.terminal_at, rec.finished) == expected


# --------------------------------------------------------------------------- the parser


def bulk_events(chunks: list[bytes], empty: bool = False) -> list[tuple[str, int]]:
    """split_events as the reconstructor drives it (what it uses is dropped), then EOF;
    events whose data is empty only with ``empty`` (the incremental parser's events
    do not tell an empty ``data:`` from none)."""
    buf, base, out = b"", 0, []
    for chunk in chunks:
        buf += chunk
        payloads, starts, used = split_events(buf, base)
        out += zip(payloads, starts, strict=True)
        buf, base = buf[used:], base + used
    out += zip(*split_rest(buf, base), strict=True)
    return [(p.decode("utf-8", "replace"), s) for p, s in out if p or empty]


ODD = (
    b": hello\n\nevent: a\ndata: 1\nid: 7\nretry: 10\n\n"  # id/retry lines ignored
    b"data:no-space\n\ndata\n\n"  # no space after the colon; a bare field name
    b"data: x\rstill x\n\n"  # a lone CR inside a line is content
    b"event: only-a-name\n\n\n\n"  # no data: not an event for us; blank-line run
    b"data: one\ndata: two\r\n\r\n"  # multi-line data, then a CRLF blank line
    b"dataX: not data\ndata : not data either\n: c\ndata: \xe2\x98\x80\n\n"
    b'event: last\ndata: {"a": 1}'
)  # no blank line at EOF


@pytest.mark.parametrize(
    "raw",
    [
        ODD,
        STREAMS["chat"],
        STREAMS["responses"].replace(b"\n", b"\r\n"),
        variants(STREAMS["anthropic"])["multiline"],
    ],
)
def test_bulk_events_equal_the_incremental_parsers_at_every_chunking(raw: bytes) -> None:
    expected = reference_events(raw)
    assert bulk_events([raw]) == expected
    for cut in range(1, len(raw)):
        assert bulk_events([raw[:cut], raw[cut:]]) == expected, cut
    assert bulk_events([raw[i : i + 1] for i in range(len(raw))]) == expected


def test_odd_events_read_as_the_standard_says() -> None:
    assert [d for d, _ in bulk_events([ODD], empty=True)] == [
        "1",
        "no-space",
        "",
        "x\rstill x",
        "one\ntwo",
        "☀",
        '{"a": 1}',
    ]


def test_split_events_leaves_an_incomplete_event_and_counts_from_base() -> None:
    raw = b"data: 1\n\ndata: 2\n\ndata: 3\n"
    assert split_events(raw, 100) == ([b"1", b"2"], [100, 109], 18)
    assert split_events(b"data: 1\n", 0) == ([], [], 0)
    assert split_rest(b"data: 3\n", 118) == ([b"3"], [118])
    assert split_rest(b"\n\r\n", 0) == ([], [])


def test_decode_all_marks_done_and_non_json() -> None:
    assert decode_all([b'{"a": 1}', b"[DONE]"]) == [{"a": 1}, DONE]
    assert decode_all([b"[DONE]", b"junk", b"", b"null", b"5", b'"\xff"']) == [
        DONE,
        None,
        None,
        None,
        5,
        "\ufffd",
    ]  # invalid UTF-8 read with a replacement
    assert decode_all([]) == []


# --------------------------------------------------------------------------- endings


def test_done_ends_a_chat_stream_and_what_follows_is_ignored() -> None:
    raw = STREAMS["chat"] + b'data: {"choices": [{"index": 0, "delta": {"content": "late"}}]}\n\n'
    obj, offset, finished = whole(PATHS["chat"], raw)
    assert finished and offset == raw.index(b"data: [DONE]")
    assert "late" not in json.dumps(obj)


@pytest.mark.parametrize("dialect", ["anthropic", "responses"])
def test_an_error_event_ends_the_stream_unfinished(dialect: str) -> None:
    raw = STREAMS[dialect]
    cut = raw.index(
        b"event: message_delta" if dialect == "anthropic" else b"event: response.completed"
    )
    error = (
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        b'"message": "Overloaded"}}\n\n'
    )
    torn = raw[:cut] + error
    for size in (1, 9, len(torn)):
        rec = StreamReconstructor(PATHS[dialect])
        assert [rec.feed(torn[i : i + size]) for i in range(0, len(torn), size)][-1] == cut
        assert not rec.finished
    assert reconstruct(PATHS[dialect], torn) == (None, dialect)


@pytest.mark.parametrize("dialect", sorted(PATHS))
@pytest.mark.parametrize("ending", [b"\n", b"", b"\r"])
def test_a_final_event_without_its_blank_line_completes_at_eof(dialect: str, ending: bytes) -> None:
    raw = STREAMS[dialect]
    cut = raw.rstrip(b"\n") + ending
    expected, offset, _ = whole(PATHS[dialect], raw)
    for size in (1, 13, len(cut)):
        rec = StreamReconstructor(PATHS[dialect])
        assert all(rec.feed(cut[i : i + size]) is None for i in range(0, len(cut), size))
        rec.close()
        assert rec.finished and rec.terminal_at == offset and rec.result() == expected


def test_a_stream_without_any_event_has_no_result() -> None:
    rec = StreamReconstructor(PATHS["anthropic"])
    rec.feed(b": just a comment\n\n")
    rec.close()
    assert rec.acc is None and not rec.finished
    with pytest.raises(ValueError):
        rec.result()


# --------------------------------------------------------------------------- accumulators
# Streams with every delta kind and oddity the accumulators handle. The expected
# objects, members in order, are what they gave when text was appended per delta
# (before it was kept as pieces joined once): any change would alter recorded traces.


def _ev(kind: str | None, data: Any) -> bytes:
    head = f"event: {kind}\n" if kind else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def _delta(i: int, **delta: Any) -> bytes:
    return _ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})


def _start(i: int, **block: Any) -> bytes:
    return _ev(
        "content_block_start", {"type": "content_block_start", "index": i, "content_block": block}
    )


def anthropic_mix() -> bytes:
    return b"".join(
        [
            _ev(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg_1",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-x",
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": 7,
                            "output_tokens": 1,
                            "cache_read_input_tokens": 3,
                        },
                    },
                },
            ),
            _ev("ping", {"type": "ping"}),
            _start(0, type="thinking", thinking=""),
            _delta(0, type="thinking_delta", thinking="Let me "),
            _delta(0, type="thinking_delta", thinking="think."),
            _delta(0, type="signature_delta", signature="c2ln"),
            _ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _start(1, type="text", text=""),
            _delta(
                1, type="citations_delta", citation={"type": "char_location", "cited_text": "a"}
            ),
            _delta(1, type="text_delta", text="Paris "),
            _delta(
                1, type="citations_delta", citation={"type": "char_location", "cited_text": "b"}
            ),
            _delta(1, type="text_delta", text="is nice."),
            _delta(1, type="text_delta"),  # no text member: an empty piece
            _start(2, type="redacted"),  # members created by deltas, in their first delta's order
            _delta(2, type="signature_delta", signature="x"),
            _delta(2, type="citations_delta", citation={"n": 1}),
            _delta(2, type="text_delta", text="t"),
            _delta(2, type="citations_delta", citation=None),  # ignored
            _delta(2, type="unknown_delta", text="?"),  # ignored
            _start(3, type="tool_use", id="tu_1", name="search", input={}),
            _delta(3, type="input_json_delta", partial_json='{"q": "Z'),
            _delta(3, type="input_json_delta", partial_json='\u00fcrich", "n": [1, 2]}'),
            _start(4, type="tool_use", id="tu_2", name="broken", input={}),
            _delta(4, type="input_json_delta", partial_json='{"q": '),  # never valid: input {}
            _start(5, type="tool_use", id="tu_3", name="noargs", input={}),
            _delta(9, type="text_delta", text="no such block"),
            _ev(
                "message_delta",
                {
                    "type": "message_delta",
                    "usage": {"output_tokens": 42},
                    "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                },
            ),
            _ev("message_stop", {"type": "message_stop"}),
            _delta(1, type="text_delta", text=" after the end"),
        ]
    )


def chat_mix() -> bytes:
    def chunk(*choices: dict[str, Any], **extra: Any) -> bytes:
        return _ev(
            None,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1800000000,
                "model": "gpt-x",
                "choices": list(choices),
                **extra,
            },
        )

    def choice(i: int, finish: str | None = None, **delta: Any) -> dict[str, Any]:
        return {"index": i, "delta": delta, "finish_reason": finish}

    call = {"type": "function"}
    return b"".join(
        [
            chunk(
                choice(0, role="assistant", content=""),
                choice(1, role="assistant", content=None),
                system_fingerprint="fp_1",
            ),
            chunk(choice(0, content="Hel")),
            chunk(choice(1, refusal="I can")),
            chunk(choice(0, content="lo"), choice(1, refusal="not.")),
            chunk(
                choice(
                    0,
                    tool_calls=[
                        {
                            **call,
                            "index": 1,
                            "id": "call_b",
                            "function": {"name": "b", "arguments": ""},
                        },
                        {
                            **call,
                            "index": 0,
                            "id": "call_a",
                            "function": {"name": "a", "arguments": '{"x"'},
                        },
                    ],
                )
            ),
            chunk(
                choice(
                    0,
                    tool_calls=[
                        {"index": 0, "function": {"arguments": ": 1}"}},
                        {"index": 1, "function": {"arguments": "{}"}},
                        "junk",
                    ],
                )
            ),
            chunk(choice(0, "tool_calls"), choice(1, "stop")),
            chunk(
                usage={"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11},
                service_tier="default",
            ),
            _ev(None, "[DONE]"),
        ]
    )


def responses_mix() -> bytes:
    out: list[bytes] = []

    def emit(kind: str, **payload: Any) -> None:
        out.append(_ev(kind, {"type": kind, "sequence_number": len(out), **payload}))

    pending = {
        "id": "resp_1",
        "object": "response",
        "status": "in_progress",
        "model": "gpt-x",
        "output": [],
        "error": None,
        "tools": [{"type": "function", "name": "f"}],
    }
    text = {"output_index": 0, "content_index": 0}
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    emit(
        "response.output_item.added",
        output_index=0,
        item={"id": "msg_1", "type": "message", "role": "assistant", "content": []},
    )
    emit(
        "response.content_part.added",
        **text,
        part={"type": "output_text", "text": "", "annotations": []},
    )
    emit("response.output_text.delta", **text, delta="Hi ")
    emit("response.output_text.delta", **text, delta="there")
    emit("response.output_text.delta", output_index=0, content_index=5, delta="lost")
    emit(
        "response.output_item.added",
        output_index=1,
        item={"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f", "arguments": ""},
    )
    emit("response.function_call_arguments.delta", output_index=1, delta='{"a":')
    emit("response.function_call_arguments.delta", output_index=1, delta=" 1}")
    emit(
        "response.completed",
        response={
            **pending,
            "status": "completed",
            "output": [],
            "usage": {"input_tokens": 3, "output_tokens": 4},
        },
    )
    return b"".join(out)


MIXED: dict[str, tuple[Any, type, dict[str, Any]]] = {
    "anthropic": (
        anthropic_mix,
        AnthropicStream,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "content": [
                {"type": "thinking", "thinking": "Let me think.", "signature": "c2ln"},
                {
                    "type": "text",
                    "text": "Paris is nice.",
                    "citations": [
                        {"type": "char_location", "cited_text": "a"},
                        {"type": "char_location", "cited_text": "b"},
                    ],
                },
                {"type": "redacted", "signature": "x", "citations": [{"n": 1}], "text": "t"},
                {
                    "type": "tool_use",
                    "id": "tu_1",
                    "name": "search",
                    "input": {"q": "Zürich", "n": [1, 2]},
                },
                {"type": "tool_use", "id": "tu_2", "name": "broken", "input": {}},
                {"type": "tool_use", "id": "tu_3", "name": "noargs", "input": {}},
            ],
            "usage": {"input_tokens": 7, "output_tokens": 42, "cache_read_input_tokens": 3},
        },
    ),
    "chat": (
        chat_mix,
        ChatStream,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1800000000,
            "model": "gpt-x",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "Hello",
                        "tool_calls": [
                            {
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "a", "arguments": '{"x": 1}'},
                            },
                            {
                                "id": "call_b",
                                "type": "function",
                                "function": {"name": "b", "arguments": "{}"},
                            },
                        ],
                    },
                    "finish_reason": "tool_calls",
                },
                {
                    "index": 1,
                    "message": {"role": "assistant", "content": None, "refusal": "I cannot."},
                    "finish_reason": "stop",
                },
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11},
        },
    ),
    "responses": (
        responses_mix,
        ResponsesStream,
        {
            "id": "resp_1",
            "object": "response",
            "status": "completed",
            "model": "gpt-x",
            "output": [
                {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Hi there", "annotations": []}],
                },
                {
                    "id": "fc_1",
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "f",
                    "arguments": '{"a": 1}',
                },
            ],
            "error": None,
            "tools": [{"type": "function", "name": "f"}],
            "usage": {"input_tokens": 3, "output_tokens": 4},
        },
    ),
}


@pytest.mark.parametrize("dialect", sorted(MIXED))
def test_every_delta_kind_folds_to_the_same_object_as_before(dialect: str) -> None:
    build, _, expected = MIXED[dialect]
    raw = build()
    obj, got = reconstruct(PATHS[dialect], raw)
    assert got == ("openai" if dialect == "chat" else dialect)
    assert json.dumps(obj) == json.dumps(expected)  # member order included
    for cut in range(1, len(raw), 7):
        assert in_chunks(PATHS[dialect], [raw[:cut], raw[cut:]])[0] == obj
    rec = StreamReconstructor(PATHS[dialect])
    rec.feed(raw)
    assert rec.result() == rec.result() == obj  # asking twice changes nothing


@pytest.mark.parametrize("dialect", sorted(MIXED))
def test_feeding_events_one_at_a_time_equals_feed_all(dialect: str) -> None:
    build, kind, expected = MIXED[dialect]
    acc = kind()
    for event in decode_all([p.encode() for p, _ in bulk_events([build()])]):
        if acc.feed_done() if event is DONE else acc.feed(event):
            break
    assert json.dumps(acc.result()) == json.dumps(expected)
