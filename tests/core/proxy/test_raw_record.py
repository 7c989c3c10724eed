"""Recording from raw request bodies gives what recording decoded requests gives.

The proxy splits a body one level deep (``RawRequest``), stores what changed against
the conversation's previous request as the client's bytes, and lets the recorder
skip the history items that request already brought. These tests drive sessions
with raw bodies -- compact and pretty-printed, three dialects, histories that grow,
get rewritten and move their system message -- and compare every effect, episode
and system prompt with the plain recorder fed the decoded requests one by one, and
every request the sidecar gives back with the one sent.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from loom_core.formats.wire import WireRecorder
from loom_core.proxy.rawreq import RawRequest
from loom_core.proxy.session import RecordingSession
from loom_core.proxy.sidecar import read_sidecar

Exchange = tuple[str, dict[str, Any], dict[str, Any]]  # path, request, response


def _anthropic(text: str, call: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if call:
        content.append({"type": "tool_use", "id": call, "name": "Bash", "input": {"n": 1}})
    return {"type": "message", "content": content, "usage": {"input_tokens": 3}}


def anthropic_run() -> list[Exchange]:
    """An agent loop: tool rounds, a later prompt, a compaction, a second agent."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "fix the tests"}]
    out: list[Exchange] = []
    for t in range(8):
        req = {"model": "c", "system": "sys A", "tools": [{"name": "Bash"}], "messages": history}
        out.append(("/v1/messages", copy.deepcopy(req), _anthropic(f"turn {t}", f"tu{t}")))
        history += [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"tu{t}", "name": "Bash"}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"tu{t}", "content": f"out {t}"},
                    *([{"type": "text", "text": "and now the docs"}] if t == 3 else []),
                ],
            },
        ]
        if t == 5:
            history = [history[0], {"role": "user", "content": "<context>summary</context>"}]
        if t % 3 == 1:  # a sub-agent with its own conversation, interleaved
            sub = {
                "model": "h",
                "system": "sys B",
                "messages": [{"role": "user", "content": "look"}],
            }
            out.append(("/v1/messages", sub, _anthropic("looked")))
    return out


def openai_run() -> list[Exchange]:
    """Chat Completions: the system message first, another one later, the history
    rewritten before it, then the first one replaced."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    out: list[Exchange] = []
    for t in range(7):
        response = {
            "choices": [
                {
                    "message": {
                        "content": f"c{t}",
                        "tool_calls": [
                            {"id": f"c{t}", "function": {"name": "f", "arguments": "{}"}}
                        ],
                    }
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2},
        }
        out.append(
            ("/v1/chat/completions", {"model": "g", "messages": copy.deepcopy(history)}, response)
        )
        history += [
            {"role": "assistant", "tool_calls": [{"id": f"c{t}"}]},
            {"role": "tool", "tool_call_id": f"c{t}", "content": f"r{t}"},
        ]
        if t == 2:
            history.append({"role": "developer", "content": "now be thorough"})
        if t == 4:
            history[2] = {"role": "assistant", "content": "rewritten"}  # the developer
            # message (the base's last system item) is now after the shared prefix
        if t == 5:
            history[0] = {"role": "system", "content": "be very brief"}
    return out


def responses_run() -> list[Exchange]:
    """Responses API: items, calls and outputs, a developer message, instructions."""
    items: list[dict[str, Any]] = [{"role": "user", "content": "plan"}]
    out: list[Exchange] = []
    for t in range(6):
        req: dict[str, Any] = {"model": "o", "input": copy.deepcopy(items)}
        if t >= 3:
            req["instructions"] = "you are codex"
        response = {
            "object": "response",
            "output": [
                {"type": "message", "content": [{"type": "output_text", "text": f"o{t}"}]},
                {"type": "function_call", "call_id": f"f{t}", "name": "shell", "arguments": "{}"},
            ],
        }
        out.append(("/v1/responses", req, response))
        items += [
            {"type": "function_call", "call_id": f"f{t}", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"f{t}", "output": f"done {t}"},
        ]
        if t == 1:
            items.append({"role": "developer", "content": "mind the tests"})
    out.append(("/v1/responses", {"model": "o", "input": "a plain string"}, out[0][2]))
    return out


def dialect(path: str) -> str:
    return {"/v1/messages": "anthropic", "/v1/chat/completions": "openai"}.get(path, "responses")


@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "pretty"])
@pytest.mark.parametrize("run", [anthropic_run, openai_run, responses_run])
def test_raw_bodies_record_what_decoded_requests_record(
    tmp_path: Path, run: Any, indent: int | None
) -> None:
    exchanges = run()
    session = RecordingSession(tmp_path / "s.loom.json")
    plain = WireRecorder()
    for path, request, response in exchanges:
        raw = RawRequest.parse(json.dumps(request, indent=indent).encode())
        assert raw is not None
        assert session.record(path, dialect(path), raw, response, [], 1.0)
        plain.record(request, response, [])
    ours = session.recorder
    assert ours.log == plain.log
    assert (ours.episodes, ours.systems, ours.system, ours.model, ours.output) == (
        plain.episodes,
        plain.systems,
        plain.system,
        plain.model,
        plain.output,
    )
    session.abandon()
    back = read_sidecar(tmp_path / "s.exchanges.jsonl")
    assert back.skipped == 0
    assert [x.request for x in back.exchanges] == [request for _, request, _ in exchanges]
    sidecar = (tmp_path / "s.exchanges.jsonl").read_bytes()
    assert b"\n  " not in sidecar  # a pretty body is stored compact: one line each


def test_raw_request_parts() -> None:
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}, 7], "n": 1}'
    raw = RawRequest.parse(body)
    assert raw is not None and raw.hist == "messages" and raw.count() == 2
    assert raw.get("model") == "m" and raw.get("absent", 5) == 5 and "n" in raw
    assert list(raw.history(1)) == [7]
    assert raw.value() == json.loads(body)
    assert RawRequest.parse(b"[1, 2]") is None and RawRequest.parse(b"{not json") is None
    assert RawRequest.parse(b'{"input": "text"}').hist is None  # type: ignore[union-attr]
