"""One run file per foreign format, each from its real producer, with the producer's facts.

OTLP: OpenInference / OpenLLMetry around the real ``openai`` / ``anthropic`` clients against
the fake upstream (tests/core/formats/otlp_agents.py), written as one OTLP/JSON request, as
protobuf, as the receiver files it (the real ``OTLPSpanExporter`` posting to our receiver),
and once with content capture off. Claude Code: the hand-built session of
tests/core/formats/claude_fixtures.py (no producer library exists). Inspect: a log
inspect-ai wrote (tests/inspect_producer.py), its first sample.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.core.formats.claude_fixtures import full_session
from tests.core.formats.otlp_agents import SYSTEM, run_agent
from tests.core.formats.otlp_producers import write_json, write_pb

FORMATS = ("otlp-json", "otlp-pb", "otlp-receiver", "otlp-no-content", "claude-code", "inspect")


@dataclass(frozen=True)
class Made:
    """A run file and what its producer knows about it."""

    path: Path
    format: str  # Document.format
    model_calls: int
    tool_calls: int
    tokens: tuple[int, int]  # input, output the producer was sent (None: not checked)
    context: str  # "recorded", "rebuilt" or "none": what the context view shows
    says: str  # a text the context view shows at the last top-level model step


def finished(path: Path) -> Path:
    """Not being written any more: a plain tab, not a live one."""
    old = path.stat().st_mtime - 3600
    os.utime(path, (old, old))
    return path


@contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _otel(folder: Path, producer: str, write: Callable[..., Path], name: str) -> Made:
    rec = run_agent(producer)
    path = write(folder / name, rec.spans)
    calls = len(rec.tool_calls)
    return Made(path, "otlp", len(rec.requests), calls, rec.tokens, "recorded", SYSTEM)


def _receiver(folder: Path) -> Made:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    from tests.core.live.otlp_helpers import running_receiver

    rec = run_agent("openinference-openai")
    with running_receiver(folder / "received") as rt:
        assert rt.receiver is not None
        exporter = OTLPSpanExporter(endpoint=f"{rt.receiver.endpoint}/v1/traces", timeout=5)
        for span in rec.spans:  # one request per span, as a SimpleSpanProcessor sends them
            assert exporter.export([span]) == SpanExportResult.SUCCESS
        exporter.shutdown()
    (path,) = (folder / "received").glob("*.otlp.jsonl")
    calls = len(rec.tool_calls)
    return Made(path, "otlp", len(rec.requests), calls, rec.tokens, "recorded", SYSTEM)


def _no_content(folder: Path) -> Made:
    with _env("TRACELOOP_TRACE_CONTENT", "false"):  # OpenLLMetry's switch
        rec = run_agent("openllmetry-openai", untraced=())
    path = write_pb(folder / "bare.otlp.pb", rec.spans)
    calls = len(rec.tool_calls)
    return Made(path, "otlp", len(rec.requests), calls, rec.tokens, "none", "Not recorded")


def _claude(folder: Path) -> Made:
    path, main, sub = full_session(folder / "projects")
    side_calls, side_tools, delegations = 2, 1, 2  # full_session's in-file sidechain, Task/Agent
    models = main.model_calls + side_calls + sub.model_calls
    tools = main.tool_calls - delegations + side_tools + sub.tool_calls
    tokens = (
        main.input_tokens + 70 + sub.input_tokens,
        main.output_tokens + 14 + sub.output_tokens,
    )
    return Made(path, "claude-code", models, tools, tokens, "rebuilt", "Thanks, summarise")


def _inspect(folder: Path) -> Made:
    from tests.inspect_producer import eval_log

    log = eval_log()
    facts = json.loads(Path(str(log) + ".facts.json").read_text())
    first = facts[facts["order"][0]]
    tokens = (first["input_tokens"], first["output_tokens"])
    tools = len(first["tool_calls"])
    return Made(log, "inspect", first["model_calls"], tools, tokens, "recorded", "submit")


def make(fmt: str, folder: Path) -> Made:
    """The run file of format ``fmt`` (one of :data:`FORMATS`), written under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    built = {
        "otlp-json": lambda: _otel(folder, "openinference-openai", write_json, "run.otlp.json"),
        "otlp-pb": lambda: _otel(folder, "openllmetry-anthropic", write_pb, "run.otlp.pb"),
        "otlp-receiver": lambda: _receiver(folder),
        "otlp-no-content": lambda: _no_content(folder),
        "claude-code": lambda: _claude(folder),
        "inspect": lambda: _inspect(folder),
    }[fmt]()
    finished(built.path)
    return built
