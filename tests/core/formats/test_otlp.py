"""OpenTelemetry trace files from real producers open as loom runs with the producer's facts.

Producers: OpenInference's and OpenLLMetry's instrumentations of the real ``openai`` and
``anthropic`` clients (the fake upstream answers), the real SDK, the real OTLP encoder.
Facts checked: model calls = requests the upstream received, tool calls = tools the agent
ran, tokens = usage the upstream sent, each call's input = the messages it was sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loom_core.errors import LoadError
from loom_core.formats.loader import load, sniff_format
from loom_core.formats.otlp import decode_request, spans_to_document
from loom_core.views.run_cost import token_usage
from tests.core.formats.otlp_agents import (
    Recorded,
    run_agent,
    run_agent_fresh,
    seen_by_reader,
    sent,
)
from tests.core.formats.otlp_producers import (
    request_json,
    request_proto,
    write_json,
    write_jsonl,
    write_pb,
)

PRODUCERS = (
    "openinference-openai",
    "openinference-anthropic",
    "openllmetry-openai",
    "openllmetry-anthropic",
)


def _check_run(path: Path, rec: Recorded) -> None:
    doc = load(path)
    assert doc.format == "otlp" and not doc.warnings
    kinds = [e.kind for e in doc.effects]
    assert kinds.count("model") == len(rec.requests) == 3
    ran = [f"tool:{name}" for _, name in rec.tool_calls]
    assert [k for k in kinds if k.startswith("tool:")] == ran
    # each tool step follows the model call that asked for it, before the next one
    assert kinds == ["model", "tool:search", "tool:search", "model", "tool:book", "model"]
    models = [i for i, k in enumerate(kinds) if k == "model"]
    totals = [token_usage(doc.result(i)["usage"]) for i in models]
    assert (sum(t.input for t in totals), sum(t.output for t in totals)) == rec.tokens
    assert doc.extra["content_recorded"] is True
    for i, body in zip(models, rec.requests, strict=True):
        assert seen_by_reader(doc.extra["inputs"][i]) == sent(body)
    results = [doc.result(i) for i, k in enumerate(kinds) if k.startswith("tool:")]
    assert results == ["Storchen, Widder", "Schweizerhof", "booking #42"]
    assert doc.result(models[-1])["text"] == "Booked Hotel Storchen ✓"
    assert doc.episodes == ["Find me a hotel in Zürich and one in Bern"]
    assert doc.header.system == "You are a careful travel agent."
    assert all(doc.extra["records"][i]["span_id"] for i in models)
    assert {n["seq"] for n in doc.extra["tree"]} >= set(models)


@pytest.mark.parametrize("producer", PRODUCERS)
def test_agent_loop_from_each_producer_as_jsonl_and_protobuf(producer: str, tmp_path: Path) -> None:
    rec = run_agent(producer)
    # the exporter's batches: one request per span, as a BatchSpanProcessor might send them
    _check_run(write_jsonl(tmp_path / "run.otlp.jsonl", [[s] for s in rec.spans]), rec)
    _check_run(write_pb(tmp_path / "run.otlp.pb", rec.spans), rec)


@pytest.mark.parametrize("producer", ["openinference-openai", "openllmetry-openai"])
def test_streamed_replies(producer: str, tmp_path: Path) -> None:
    rec = run_agent_fresh(producer, tmp_path / "streamed.otlp.pb", stream=True)
    assert all(body.get("stream") for body in rec.requests)
    _check_run(tmp_path / "streamed.otlp.pb", rec)


def test_one_pretty_printed_request_and_sniffing(tmp_path: Path) -> None:
    rec = run_agent("openinference-openai")
    path = write_json(tmp_path / "run.otlp.json", rec.spans)
    assert sniff_format(path) == "otlp"
    _check_run(path, rec)
    # the sniff is by content: any name works for JSON, protobuf needs a .pb name
    other = tmp_path / "exported.json"
    other.write_bytes(path.read_bytes())
    assert load(other).format == "otlp"
    plain = tmp_path / "spans.pb"
    plain.write_bytes(request_proto(rec.spans))
    assert sniff_format(plain) == "otlp"


def test_decode_request_reads_both_encodings_alike() -> None:
    rec = run_agent("openllmetry-openai")
    from_json = decode_request(json.dumps(request_json(rec.spans)).encode(), "application/json")
    from_proto = decode_request(request_proto(rec.spans), "application/x-protobuf")
    assert from_json == from_proto
    assert {s.span_id for s in from_json} == {format(s.context.span_id, "016x") for s in rec.spans}
    doc = spans_to_document(from_json, "live")
    assert [e.kind for e in doc.effects].count("model") == 3


def test_calls_without_an_agent_span_are_one_run(tmp_path: Path) -> None:
    """An agent that instrumented only its SDK client makes one trace per call."""
    rec = run_agent("openllmetry-anthropic", root=False)
    assert len({s.context.trace_id for s in rec.spans}) == 5  # 3 calls + 2 traced tools
    _check_run(write_pb(tmp_path / "run.otlp.pb", rec.spans), rec)


def test_several_runs_show_the_earliest(tmp_path: Path) -> None:
    first = run_agent("openinference-openai")
    second = run_agent("openinference-openai")
    path = write_jsonl(tmp_path / "two.otlp.jsonl", [second.spans, first.spans])
    doc = load(path)
    assert len(doc.extra["traces"]) == 2
    assert any("2 runs" in w for w in doc.warnings)
    first_trace = format(first.spans[0].context.trace_id, "032x")
    assert doc.extra["records"][0]["trace_id"] == first_trace


def test_content_capture_off_still_gives_a_timeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # OpenLLMetry's switch (its README): TRACELOOP_TRACE_CONTENT=false
    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "false")
    rec = run_agent("openllmetry-openai", untraced=())
    doc = load(write_pb(tmp_path / "bare.otlp.pb", rec.spans))
    kinds = [e.kind for e in doc.effects]
    assert kinds.count("model") == 3
    assert doc.extra["content_recorded"] is False
    assert doc.extra["inputs"] == {}
    models = [i for i, k in enumerate(kinds) if k == "model"]
    totals = [token_usage(doc.result(i)["usage"]) for i in models]
    assert (sum(t.input for t in totals), sum(t.output for t in totals)) == rec.tokens


def test_openinference_hidden_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenInference's switches (openinference-instrumentation TraceConfig)
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUT_MESSAGES", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUT_MESSAGES", "true")
    rec = run_agent("openinference-anthropic", untraced=())
    doc = load(write_jsonl(tmp_path / "bare.otlp.jsonl", [rec.spans]))
    assert [e.kind for e in doc.effects].count("model") == 3
    assert doc.extra["content_recorded"] is False


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        (b"\x00\x01garbage\xff", "not OTLP protobuf"),
        (b'{"resourceSpans": 5}', "resourceSpans is a number, not a list"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": ["x"]}]}]}', "not an object"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 7}]}]}]}', "traceId"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "soon"}]}]}]}',
            "nanoseconds",
        ),
        (b'{"resourceSpans": [{"scopeSp', "not JSON"),
        (b'{"resourceSpans": []}', "no spans"),
    ],
)
def test_bad_files_raise_load_error_naming_the_cause(
    body: bytes, cause: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.otlp.pb"
    path.write_bytes(body)
    with pytest.raises(LoadError) as err:
        load(path)
    assert err.value.path == str(path)
    assert cause in err.value.cause


def test_truncated_protobuf(tmp_path: Path) -> None:
    rec = run_agent("openinference-openai")
    data = request_proto(rec.spans)
    path = tmp_path / "cut.otlp.pb"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(LoadError, match="not OTLP protobuf"):
        load(path)
