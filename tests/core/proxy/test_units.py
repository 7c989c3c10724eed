"""The proxy's pure parts, without sockets: SSE parsing, reconstruction, synthesis,
request deltas and scrubbing. loom-harness's reconstructors are the oracle where
it has one (Anthropic, Chat Completions)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from loom.proxy import reconstruct_openai_sse, reconstruct_sse

from loom_core.formats.wire import WireRecorder
from loom_core.proxy.reconstruct import StreamReconstructor, reconstruct
from loom_core.proxy.scrub import scrub_value
from loom_core.proxy.sidecar import read_sidecar
from loom_core.proxy.sidecar_writer import SidecarWriter
from loom_core.proxy.synthesize import synthesize
from tests.core.proxy import fake_wire as fw
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.sse_reference import SSEParser

TURN = Reply(
    text="Zürich ☀ is fine",
    calls=[("t1", "search", {"city": "Zürich", "n": 2}), ("t2", "book", {"id": [1, 2]})],
    usage=(50, 9),
)
STREAMS = {
    "/v1/messages": b"".join(fw.anthropic_sse(TURN, 3, "claude-x")),
    "/v1/chat/completions": b"".join(fw.chat_sse(TURN, 3, "gpt-x", usage=True)),
    "/v1/responses": b"".join(fw.responses_sse(TURN, 3, "gpt-x")),
}


def parse_in_pieces(raw: bytes, size: int) -> list[tuple[str, str, int, int]]:
    parser = SSEParser()
    events = []
    for i in range(0, len(raw), size):
        events += parser.feed(raw[i : i + size])
    events += parser.close()
    return [(e.event, e.data, e.start, e.end) for e in events]


@pytest.mark.parametrize("size", [1, 2, 7, 64, 1 << 20])
def test_sse_parsing_does_not_depend_on_chunking(size: int) -> None:
    raw = STREAMS["/v1/messages"]
    whole = parse_in_pieces(raw, len(raw))
    assert parse_in_pieces(raw, size) == whole
    assert all(raw[s:e].endswith(b"\n\n") for _, _, s, e in whole)
    crlf = raw.replace(b"\n", b"\r\n")
    assert [(ev, d) for ev, d, _, _ in parse_in_pieces(crlf, size)] == [
        (ev, d) for ev, d, _, _ in whole
    ]


def test_reconstruction_matches_loom_harness() -> None:
    ours, _ = reconstruct("/v1/messages", STREAMS["/v1/messages"])
    assert ours == reconstruct_sse(STREAMS["/v1/messages"].decode())
    assert ours == fw.anthropic_json(TURN, 3, "claude-x")  # = the non-streamed answer
    chat, dialect = reconstruct("/v1/chat/completions", STREAMS["/v1/chat/completions"])
    theirs = reconstruct_openai_sse(STREAMS["/v1/chat/completions"].decode())
    assert (
        dialect == "openai"
        and {k: v for k, v in chat.items() if k not in ("id", "created")} == theirs
    )
    resp, dialect = reconstruct("/v1/responses", STREAMS["/v1/responses"])
    assert dialect == "responses" and resp == fw.responses_json(TURN, 3, "gpt-x")


def test_responses_completed_without_output_is_rebuilt_from_items() -> None:
    events = fw.responses_sse(TURN, 3, "gpt-x")
    last = json.loads(events[-1].split(b"data: ", 1)[1])
    last["response"]["output"] = None  # newer servers may omit it (the SDK recovers it too)
    events[-1] = f"event: response.completed\ndata: {json.dumps(last)}\n\n".encode()
    resp, _ = reconstruct("/v1/responses", b"".join(events))
    assert resp is not None and resp["output"] == fw.responses_json(TURN, 3, "gpt-x")["output"]


@pytest.mark.parametrize("path", sorted(STREAMS))
def test_terminal_event_offset_and_incomplete_streams(path: str) -> None:
    raw = STREAMS[path]
    marker = {
        "/v1/messages": b"event: message_stop",
        "/v1/chat/completions": b"data: [DONE]",
        "/v1/responses": b"event: response.completed",
    }[path]
    rec = StreamReconstructor(path)
    offsets = [rec.feed(raw[i : i + 5]) for i in range(0, len(raw), 5)]
    assert offsets[-1] == raw.rindex(marker) and rec.finished
    assert offsets[: raw.rindex(marker) // 5] == [None] * (raw.rindex(marker) // 5)
    torn, _ = reconstruct(path, raw[: len(raw) // 2])
    assert torn is None  # half a stream is not a response


@pytest.mark.parametrize("dialect", ["anthropic", "chat", "responses"])
def test_synthesized_sse_reconstructs_to_the_recorded_object(dialect: str) -> None:
    recorded = {
        "anthropic": fw.anthropic_json,
        "chat": fw.chat_json,
        "responses": fw.responses_json,
    }[dialect](TURN, 1, "x")
    path = {
        "anthropic": "/v1/messages",
        "chat": "/v1/chat/completions",
        "responses": "/v1/responses",
    }[dialect]
    rebuilt, _ = reconstruct(path, synthesize(recorded))
    assert rebuilt is not None
    if dialect == "chat":  # members a stream does not carry: logprobs, a null refusal
        recorded["choices"][0].pop("logprobs")
        recorded["choices"][0]["message"].pop("refusal")
    assert rebuilt == recorded
    if dialect == "anthropic":
        assert reconstruct_sse(synthesize(recorded).decode()) == recorded


def conversation(turns: int) -> list[dict[str, Any]]:
    """Requests of a growing conversation, with one history rewrite (compaction)."""
    tools = [{"name": f"tool{i}", "input_schema": {"type": "object"}} for i in range(20)]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start " + "x" * 200}]
    out = []
    for t in range(turns):
        req = {
            "model": "m",
            "max_tokens": 100,
            "system": "sys " * 50,
            "tools": tools,
            "messages": copy.deepcopy(messages),
        }
        if t == turns // 2:
            req["temperature"] = 0.5  # a member that comes and goes
        out.append(req)
        messages += [
            {"role": "assistant", "content": f"answer {t} " + "y" * 100},
            {"role": "user", "content": f"more {t}"},
        ]
        if t == turns * 2 // 3:
            messages = [
                {"role": "user", "content": "start " + "x" * 200},
                {"role": "user", "content": "Summary of earlier conversation: ..."},
            ]
    return out


def test_sidecar_rebuilds_each_request_exactly_and_stays_small(tmp_path: Any) -> None:
    main, other = conversation(30), conversation(5)
    for r in other:
        r["system"] = "another agent"
        r["messages"][0]["content"] = "other task"
    order = [("/v1/messages", r) for r in main]
    for i, r in enumerate(other):  # a second conversation interleaved
        order.insert(3 + 4 * i, ("/v1/messages", r))
    order.insert(7, ("/v1/responses", {"model": "g", "input": "plain string input"}))
    writer = SidecarWriter(tmp_path / "x.exchanges.jsonl", "https://api.example.com", False)
    for n, (path, request) in enumerate(order):
        writer.exchange(n, path, "anthropic", request, {"type": "message", "content": []}, [], 1.0)
    writer.close(clean=True)
    back = read_sidecar(tmp_path / "x.exchanges.jsonl")
    assert [x.request for x in back.exchanges] == [r for _, r in order]
    assert [json.dumps(x.request) for x in back.exchanges] == [json.dumps(r) for _, r in order]
    assert back.ended and back.skipped == 0 and back.session["target"] == "https://api.example.com"
    stored = (tmp_path / "x.exchanges.jsonl").stat().st_size
    whole = sum(len(json.dumps(r)) for _, r in order)
    assert stored < whole / 5, (stored, whole)  # not quadratic in the history


def test_torn_sidecar_line_is_skipped(tmp_path: Any) -> None:
    path = tmp_path / "t.exchanges.jsonl"
    writer = SidecarWriter(path, "", False)
    for n, r in enumerate(conversation(3)):
        writer.exchange(n, "/v1/messages", "anthropic", r, {"content": []}, [], 1.0)
    writer.close(clean=False)
    path.write_bytes(path.read_bytes()[:-40])  # a crash mid-line
    back = read_sidecar(path)
    assert len(back.exchanges) == 2 and back.skipped == 1 and not back.ended


def test_scrub_value_copies_and_keeps_structure() -> None:
    value = {
        "token_count": 3,
        "text": ["Bearer abcdefghijklmnopqrstuvwxyz", "plain"],
        "nested": {"password": "x", "note": "pwd=correcthorsebattery"},
    }
    original = copy.deepcopy(value)
    out = scrub_value(value)
    assert value == original  # the object sent to the client is never touched
    assert out == {
        "token_count": 3,
        "text": ["Bearer [scrubbed:bearer]", "plain"],
        "nested": {"password": "x", "note": "pwd=[scrubbed:credential-assignment]"},
    }


def test_responses_recorder_handles_other_call_kinds() -> None:
    rec = WireRecorder()
    first = {
        "object": "response",
        "output": [
            {
                "type": "custom_tool_call",
                "call_id": "c1",
                "name": "apply_patch",
                "input": "*** Begin",
            },
            {"type": "local_shell_call", "call_id": "c2", "action": {"command": ["ls"]}},
            {"type": "web_search_call", "id": "ws1", "status": "completed"},
        ],
        "usage": {"input_tokens": 5, "output_tokens": 6},
    }
    rec.record({"model": "codex", "input": "fix it"}, first)
    second_input = [
        "fix it",
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"},
        {
            "type": "local_shell_call_output",
            "call_id": "c2",
            "output": [{"type": "input_text", "text": "a.py"}],
        },
    ]
    rec.record(
        {"model": "codex", "input": second_input}, {"object": "response", "output": [], "usage": {}}
    )
    trace = rec.to_trace()
    calls = trace["log"][0]["result"]["tool_calls"]
    assert calls == [
        {"id": "c1", "name": "apply_patch", "input": {"input": "*** Begin"}},
        {"id": "c2", "name": "local_shell", "input": {"command": ["ls"]}},
    ]
    assert [(e["kind"], e["result"]) for e in trace["log"][1:3]] == [
        ("tool:apply_patch", "ok"),
        ("tool:local_shell", "a.py"),
    ]
    assert trace["episodes"] == ["fix it"]


def test_incremental_trace_file_writes_what_save_dict_writes(tmp_path: Any) -> None:
    from loom_core.formats.save import save_dict
    from loom_core.proxy.tracefile import TraceFile

    rec = WireRecorder()
    fast, reference = TraceFile(tmp_path / "fast.loom.json"), tmp_path / "ref.loom.json"
    for n, r in enumerate(conversation(6)):
        reply = fw.anthropic_json(
            Reply(text=f"ü {n} ☀", calls=[(f"t{n}", "f", {"x": [n]})]), n, "m"
        )
        rec.record(r, reply, [{"ts": 1795934289.177808, "action": "tainted"}] if n == 2 else [])
        data = {**rec.to_trace(), "workspace": {"cwd": "/tmp", "argv": ["a"]}}
        fast.write(data)
        save_dict(data, reference)
        assert fast.path.read_bytes() == reference.read_bytes(), n
    with pytest.raises(ValueError):
        fast.write({**rec.to_trace(), "log": []})


def test_hop_by_hop_and_owned_headers_do_not_cross() -> None:
    from multidict import CIMultiDict, CIMultiDictProxy

    from loom_core.proxy.upstream import request_headers, response_headers

    incoming = CIMultiDictProxy(
        CIMultiDict(
            [
                ("Host", "127.0.0.1:1"),
                ("Connection", "keep-alive, X-Hop"),
                ("X-Hop", "1"),
                ("Keep-Alive", "timeout=5"),
                ("Transfer-Encoding", "chunked"),
                ("Content-Length", "9"),
                ("Accept-Encoding", "gzip"),
                ("X-Loom-Token", "t"),
                ("x-api-key", "sk-ant-xyz"),
                ("Authorization", "Bearer abc"),
                ("anthropic-beta", "a"),
                ("anthropic-beta", "b"),
                ("X-Stainless-Lang", "python"),
                ("Content-Type", "application/json"),
            ]
        )
    )
    assert request_headers(incoming) == [
        ("x-api-key", "sk-ant-xyz"),
        ("Authorization", "Bearer abc"),
        ("anthropic-beta", "a"),
        ("anthropic-beta", "b"),
        ("X-Stainless-Lang", "python"),
        ("Content-Type", "application/json"),
    ]
    upstream = CIMultiDictProxy(
        CIMultiDict(
            [
                ("Content-Type", "text/event-stream"),
                ("Content-Encoding", "gzip"),
                ("Content-Length", "10"),
                ("request-id", "req_1"),
                ("retry-after", "3"),
                ("Connection", "close"),
                ("Date", "x"),
                ("Server", "y"),
            ]
        )
    )
    assert response_headers(upstream) == [
        ("Content-Type", "text/event-stream"),
        ("request-id", "req_1"),
        ("retry-after", "3"),
    ]
