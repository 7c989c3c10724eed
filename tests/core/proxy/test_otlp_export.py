"""``--otlp-endpoint``: the proxy's exchanges as GenAI spans, end to end into our receiver.

Why our own receiver as the backend and not Arize Phoenix: Phoenix (with its embedded
SQLite) pulls a web server, a database layer and a UI into CI for what is, on the wire,
one ``POST /v1/traces``; our receiver is the real OTLP/HTTP endpoint with nothing else,
and the OTLP file reader then reads back what it stored.
"""

from __future__ import annotations

import json
import socket
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from loom_core.formats.loader import load
from tests.core.live.otlp_helpers import running_receiver, stored_spans
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import anthropic_agent, start_rig
from tests.core.proxy.procs import ProxyProcess

CALLS = [("call_1", "list_files", {"path": "."}), ("call_2", "read_file", {"path": "a.txt"})]
RESULTS = {"call_1": "a.txt b.txt", "call_2": "hello from a"}


def _script() -> list[Reply]:
    return [
        Reply(calls=[CALLS[0]], usage=(100, 10)),
        Reply(calls=[CALLS[1]], usage=(120, 12)),
        Reply(text="a.txt says hello", usage=(140, 14)),
    ]


def openai_agent(client: openai.OpenAI, turns: int = 5) -> int:
    """A chat-completions tool loop as an agent writes it; returns the model calls made."""
    messages: list[Any] = [
        {"role": "system", "content": "You read files."},
        {"role": "user", "content": "What does a.txt say?"},
    ]
    tools: list[Any] = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for _, n, _ in CALLS
    ]
    for turn in range(1, turns + 1):
        reply = client.chat.completions.create(model="gpt-fake", messages=messages, tools=tools)
        message = reply.choices[0].message
        if not message.tool_calls:
            return turn
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": RESULTS[call.id]})
    raise AssertionError("agent did not finish")


def responses_agent(client: openai.OpenAI, turns: int = 5) -> int:
    """The same loop on the Responses API (streamed); returns the model calls made."""
    items: list[Any] = [{"role": "user", "content": "What does a.txt say?"}]
    tools: list[Any] = [
        {"type": "function", "name": n, "parameters": {"type": "object"}} for _, n, _ in CALLS
    ]
    for turn in range(1, turns + 1):
        with client.responses.stream(
            model="gpt-fake", instructions="You read files.", input=items, tools=tools
        ) as stream:
            reply = stream.get_final_response()
        calls = [o for o in reply.output if o.type == "function_call"]
        if not calls:
            return turn
        items += [c.model_dump(exclude_none=True) for c in calls]
        items += [
            {"type": "function_call_output", "call_id": c.call_id, "output": RESULTS[c.call_id]}
            for c in calls
        ]
    raise AssertionError("agent did not finish")


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "responses"])
def test_spans_reach_the_receiver_and_read_back_as_the_run(tmp_path: Path, dialect: str) -> None:
    content = dialect != "openai"  # runs with content, one without
    with running_receiver(tmp_path / "otel") as rt:
        assert rt.receiver is not None
        rig = start_rig(tmp_path, otlp_endpoint=rt.receiver.endpoint, otlp_content=content)
        with rig:
            rig.upstream.script(*_script())
            if dialect == "openai":
                assert openai_agent(rig.openai()) == 3
            elif dialect == "responses":
                assert responses_agent(rig.openai()) == 3
            else:
                messages: list[Any] = [{"role": "user", "content": "What does a.txt say?"}]
                anthropic_agent(
                    rig.anthropic(), messages, RESULTS, 5, model="claude-fake", max_tokens=64
                )
            trace = rig.stop()  # the proxy's close flushes the spans
    (path,) = (tmp_path / "otel").iterdir()
    spans = stored_spans(path)
    chats = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "chat"]
    tools = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "execute_tool"]
    assert len(spans) == 6 and len(chats) == 3 and len(tools) == 2  # + the session root
    sent = [r.usage for r in _script()]
    assert [int(_attrs(s)["gen_ai.usage.input_tokens"]) for s in chats] == [u[0] for u in sent]
    assert [int(_attrs(s)["gen_ai.usage.output_tokens"]) for s in chats] == [u[1] for u in sent]
    provider = "anthropic" if dialect == "anthropic" else "openai"
    assert {_attrs(s)["gen_ai.provider.name"] for s in chats} == {provider}
    assert [_attrs(s)["gen_ai.tool.call.id"] for s in tools] == ["call_1", "call_2"]
    assert [_attrs(s)["gen_ai.tool.name"] for s in tools] == ["list_files", "read_file"]
    last = _attrs(chats[-1])
    if content:
        inputs = json.loads(last["gen_ai.input.messages"])
        responses = [p for m in inputs for p in m["parts"] if p["type"] == "tool_call_response"]
        assert [p["response"] for p in responses] == list(RESULTS.values())
        output = json.loads(last["gen_ai.output.messages"])
        assert output[0]["parts"] == [{"type": "text", "content": "a.txt says hello"}]
        assert json.loads(_attrs(tools[1])["gen_ai.tool.call.arguments"]) == {"path": "a.txt"}
    else:
        assert not [k for s in spans for k in _attrs(s) if "messages" in k or "call.result" in k]
    doc = load(path)  # our OTLP reader: the same steps the proxy recorded
    kinds = [e.kind for e in doc.effects]
    assert kinds.count("model") == 3 and sum(k.startswith("tool:") for k in kinds) == 2
    recorded = [e["kind"] for e in trace["log"]]
    assert kinds == recorded


def _closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        return int(sock.getsockname()[1])


def _run(tmp: Path, n: int, **overrides: Any) -> tuple[list[float], dict[str, Any]]:
    rig = start_rig(tmp, **overrides)
    with rig:
        rig.upstream.script(*[Reply(text=f"answer {i}") for i in range(n)])
        client = rig.openai()
        times = []
        for i in range(n):
            began = time.perf_counter()
            reply = client.chat.completions.create(
                model="gpt-fake", messages=[{"role": "user", "content": f"question {i}"}]
            )
            times.append(time.perf_counter() - began)
            assert reply.choices[0].message.content == f"answer {i}"
        return times, rig.stop()


def test_a_down_collector_changes_nothing_for_the_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    exports: list[str] = []  # the thread of every export attempt
    real_export = OTLPSpanExporter.export

    def counted(self: OTLPSpanExporter, spans: Any) -> Any:
        exports.append(threading.current_thread().name)
        return real_export(self, spans)

    monkeypatch.setattr(OTLPSpanExporter, "export", counted)
    n = 20
    (tmp_path / "plain").mkdir()
    (tmp_path / "otlp").mkdir()
    plain, plain_trace = _run(tmp_path / "plain", n)
    url = f"http://127.0.0.1:{_closed_port()}"
    down, down_trace = _run(tmp_path / "otlp", n, otlp_endpoint=url, otlp_content=True)
    # every request answered and recorded, exactly as without the exporter
    assert [e["kind"] for e in down_trace["log"]] == ["model"] * n
    assert [e["result"] for e in down_trace["log"]] == [e["result"] for e in plain_trace["log"]]
    # the export was attempted (and failed) on the SDK's thread, never on the proxy's loop
    assert exports and not [t for t in exports if t == "proxy-test-loop"]
    said = capsys.readouterr().err
    assert said.count("OTLP export to") == 1 and "Traceback" not in said  # said once
    print(
        f"\nmedian request latency over {n} calls: {statistics.median(plain) * 1000:.2f} ms "
        f"without --otlp-endpoint, {statistics.median(down) * 1000:.2f} ms with a down collector"
    )


def test_the_flag_on_the_command_line(tmp_path: Path) -> None:
    """The process announces where spans go; a bad URL is refused before anything runs."""
    with running_receiver(tmp_path / "otel") as rt:
        assert rt.receiver is not None
        flags = ("--target", "http://127.0.0.1:9", "--save", str(tmp_path / "s.loom.json"))
        with ProxyProcess(tmp_path, *flags, "--otlp-endpoint", rt.receiver.endpoint) as proc:
            assert proc.ready["otlp"] == rt.receiver.endpoint + "/v1/traces"
            assert proc.stop() == 0
    from tests.core.clis import core

    bad = core("proxy", "--otlp-endpoint", "ftp://x", "--save", tmp_path / "b.loom.json")
    assert bad.returncode == 2 and "not an http(s) URL" in bad.stderr
    assert not (tmp_path / "b.loom.json").exists()
