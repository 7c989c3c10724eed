"""Real OpenTelemetry producers for the OTLP reader's tests.

The real ``opentelemetry-sdk`` with a real instrumentation (OpenInference's or
OpenLLMetry's) wrapped around the real ``openai`` / ``anthropic`` clients, which talk to
the fake upstream on 127.0.0.1; the finished spans are written with the real OTLP encoder
(``encode_spans`` -> ``ExportTraceServiceRequest`` protobuf) and, for OTLP/JSON,
protobuf's JSON mapping with the OTLP rule that trace and span ids are hex, not base64.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_ID_KEYS = ("traceId", "spanId", "parentSpanId")


SDK_SCOPE = "com.anthropic.sdk.python"  # the Anthropic SDK's own spans (anthropic 2.x)


def _instrumentor(name: str) -> Any:
    if name == "openinference-openai":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        return OpenAIInstrumentor()
    if name == "openinference-anthropic":
        from openinference.instrumentation.anthropic import AnthropicInstrumentor

        return AnthropicInstrumentor()
    if name == "openllmetry-openai":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as LLOpenAI

        return LLOpenAI()
    if name == "openllmetry-anthropic":
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor as LLAnth

        return LLAnth()
    if name == "openinference-openai-agents":
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        return OpenAIAgentsInstrumentor()
    raise ValueError(name)


@contextmanager
def instrumented_globally(
    names: Sequence[str],
) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """The normal set-up (``phoenix.otel.register()``, ``Traceloop.init()``): a tracer
    provider set as OpenTelemetry's GLOBAL one, every instrumentation in ``names`` on it --
    and so the Anthropic SDK's own spans too (on by default in ``anthropic`` 2.x, through
    the global provider). The global provider can be set once per process: call this in a
    fresh interpreter (:func:`tests.core.formats.otlp_agents.run_agent_fresh`)."""
    from opentelemetry import trace

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    insts = [_instrumentor(name) for name in names if name != "anthropic-sdk"]
    for inst in insts:
        inst.instrument()
    try:
        yield provider, exporter
    finally:
        for inst in reversed(insts):
            inst.uninstrument()
        provider.shutdown()


@contextmanager
def instrumented(name: str) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A tracer provider exporting into memory, with instrumentation ``name`` on; both
    undone on exit (instrumentors patch the SDK classes process-wide)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = _instrumentor(name)
    inst.instrument(tracer_provider=provider)
    try:
        yield provider, exporter
    finally:
        inst.uninstrument()
        provider.shutdown()


@contextmanager
def instrumented_events(
    name: str, endpoint: str | None = None
) -> Iterator[tuple[TracerProvider, InMemorySpanExporter, InMemoryLogRecordExporter]]:
    """OpenLLMetry instrumentation ``name`` in its event mode (``use_legacy_attributes=
    False``): prompts and completions go out as OTLP log records, kept in memory beside
    the spans and, with ``endpoint``, sent there too by the SDK's OTLP/HTTP exporters
    (protobuf, each span and record as it ends). Call it in a fresh interpreter
    (:mod:`tests.core.formats.otlp_event_mode`): OpenLLMetry's mode is class-wide."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    if endpoint is not None:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        spans_out = OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", timeout=5)
        provider.add_span_processor(SimpleSpanProcessor(spans_out))
        logs_out = OTLPLogExporter(endpoint=f"{endpoint}/v1/logs", timeout=5)
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs_out))
    if name == "openllmetry-openai":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as Inst
    else:
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor as Inst
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the name the issue uses
        inst = Inst(use_legacy_attributes=False)
    inst.instrument(tracer_provider=provider, logger_provider=logger_provider)
    try:
        yield provider, exporter, logs
    finally:
        inst.uninstrument()
        provider.shutdown()
        logger_provider.shutdown()


def logs_json(records: Sequence[Any]) -> dict[str, Any]:
    """Log records as an OTLP/JSON logs request: protobuf's JSON mapping, ids in hex."""
    return _hex_ids(MessageToDict(encode_logs(records)))


def request_proto(spans: Sequence[ReadableSpan]) -> bytes:
    """The spans as one serialized ``ExportTraceServiceRequest`` (what OTLP/HTTP posts)."""
    return encode_spans(spans).SerializeToString()


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def request_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The spans as an OTLP/JSON request: protobuf's JSON mapping, ids in hex."""
    return _hex_ids(MessageToDict(encode_spans(spans)))


def write_jsonl(path: Path, batches: Sequence[Sequence[ReadableSpan]]) -> Path:
    """One OTLP/JSON request per line (the OTLP file exporter's layout)."""
    path.write_text("".join(json.dumps(request_json(b)) + "\n" for b in batches))
    return path


def write_json(path: Path, spans: Sequence[ReadableSpan]) -> Path:
    path.write_text(json.dumps(request_json(spans), indent=2))
    return path


def write_pb(path: Path, spans: Sequence[ReadableSpan]) -> Path:
    path.write_bytes(request_proto(spans))
    return path


def in_agent_span(provider: TracerProvider, name: str, run: Callable[[], Any]) -> Any:
    """``run`` inside an OpenInference AGENT span (what an agent framework adds)."""
    tracer = provider.get_tracer("loom-tests")
    with tracer.start_as_current_span(name, attributes={"openinference.span.kind": "AGENT"}):
        return run()
