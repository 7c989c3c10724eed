"""``--otlp-endpoint``: every recorded exchange as OpenTelemetry GenAI spans, over OTLP/HTTP.

Why: a team keeps its runs in the observability backend it already runs (a collector,
Jaeger, Tempo, Phoenix, Langfuse), not in a server of ours. The proxy already knows each
model call and each tool result (the effects it records), so it can describe them in the
GenAI semantic conventions: a ``chat {model}`` span per model call (``gen_ai.*`` request,
response and usage attributes) and an ``execute_tool {name}`` span per tool result, from
the reply that asked for the tool to the request that brought its result back. All spans
of one proxy session share one trace, under a ``loom.proxy.session`` root sent at close.
Message content (``gen_ai.input.messages`` …, :mod:`.otlp_content`) only with
``--otlp-content``: content capture is opt-in in OpenTelemetry, as here.

Never slowing the client: :meth:`OtlpExport.submit` runs on the event loop after the
exchange is on disk and only puts a reference on a queue. Spans are built on this
module's own thread; the SDK's ``BatchSpanProcessor`` batches them and its exporter
retries on its own thread. A collector that is down costs the client nothing and the
recording nothing: spans wait in the SDK's bounded queue and are dropped when it is full.
"""

from __future__ import annotations

import json
import logging
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Span, SpanKind, Tracer, set_span_in_context

from loom_core import __version__
from loom_core.proxy.otlp_content import input_messages, output_messages, tool_definitions
from loom_core.proxy.otlp_usage import as_dict, response_attributes

TRACES_PATH = "/v1/traces"
SCHEDULE_MS = 1000  # a live viewer behind the collector sees each step within a second
EXPORT_TIMEOUT_S = 10.0  # per batch, retries included (the SDK's default)
FLUSH_S = 3.0  # at close: what a reachable collector gets to take the last spans
STOP_S = 2.0
# where the SDK reports failed exports and a full queue
_SDK_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.sdk._shared_internal",
)


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL for a collector's base URL (``http://host:4318`` gets
    ``/v1/traces``, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` does); ValueError if not http(s)."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--otlp-endpoint: not an http(s) URL: {endpoint!r}")
    base = endpoint.rstrip("/")
    return base if base.endswith(TRACES_PATH) else base + TRACES_PATH


@dataclass(frozen=True)
class Exchange:
    """What the session hands over for one recorded exchange (references, not copies: the
    recording never changes them afterwards)."""

    path: str
    dialect: str
    request: dict[str, Any]
    response: dict[str, Any]
    effects: list[dict[str, Any]]  # the effects this exchange appended (tools, then model)
    ms: float
    end_ns: int


class _OnceFilter(logging.Filter):
    """The SDK logs every failed or retried export; a proxy's stderr says it once."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.said = False

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        if not self.said:
            self.said = True
            print(
                f"loom proxy: OTLP export to {self.url}: {record.getMessage()} (later "
                "failures are not repeated; the local recording is unaffected)",
                file=sys.stderr,
                flush=True,
            )
        return False


def provider_name(dialect: str) -> str:
    """``gen_ai.provider.name`` of a wire dialect."""
    return "anthropic" if dialect == "anthropic" else "openai"


class OtlpExport:
    """The span builder thread and the SDK pipeline behind it; see the module docstring."""

    def __init__(
        self,
        endpoint: str,
        content: bool = False,
        target: str = "",
        exporter: SpanExporter | None = None,
    ) -> None:
        self.url = traces_url(endpoint)
        self.content = content
        self.target = urlsplit(target) if target else None
        self.exporter = exporter or OTLPSpanExporter(endpoint=self.url, timeout=EXPORT_TIMEOUT_S)
        self.processor = BatchSpanProcessor(self.exporter, schedule_delay_millis=SCHEDULE_MS)
        resource = Resource.create({"service.name": "loom-proxy", "service.version": __version__})
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(self.processor)
        self.tracer: Tracer = self.provider.get_tracer("loom_core.proxy", __version__)
        self.spans = 0  # spans built (tests and the stop line count them)
        self._queue: queue.SimpleQueue[Exchange | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="otlp-export", daemon=True)
        self._root: Span | None = None
        self._calls: dict[str, tuple[int, str, Any]] = {}  # tool call id -> (asked at, name, input)
        self._failed = False
        self._quiet = _OnceFilter(self.url)
        for name in _SDK_LOGGERS:
            logging.getLogger(name).addFilter(self._quiet)

    def start(self) -> None:
        self._thread.start()

    def submit(
        self,
        path: str,
        dialect: str,
        request: dict[str, Any],
        response: dict[str, Any],
        effects: list[dict[str, Any]],
        ms: float,
    ) -> None:
        """Hand one recorded exchange over (on the event loop: a queue put, never blocks)."""
        self._queue.put(Exchange(path, dialect, request, response, effects, ms, time.time_ns()))

    def close(self) -> None:
        """Build what is queued, end the root span, flush (bounded), shut the SDK down.
        Blocking: the proxy calls it off its loop. A collector that is down costs at most
        ``FLUSH_S`` + ``STOP_S``."""
        self._queue.put(None)
        self._thread.join(STOP_S * 5)
        if self._root is not None:
            self._root.end()
            self.spans += 1
        stopper = threading.Thread(target=self.provider.shutdown, name="otlp-shutdown", daemon=True)
        stopper.start()
        stopper.join(FLUSH_S)
        if stopper.is_alive():  # still retrying a collector that does not answer
            self.exporter.shutdown()  # aborts the retry wait; those spans are dropped
            stopper.join(STOP_S)
        for name in _SDK_LOGGERS:
            logging.getLogger(name).removeFilter(self._quiet)

    def _work(self) -> None:
        while (exchange := self._queue.get()) is not None:
            try:
                self._emit(exchange)
            except Exception as err:  # noqa: BLE001 - a span is never worth the recording
                if not self._failed:
                    self._failed = True
                    print(
                        f"loom proxy: OTLP span not built ({type(err).__name__}: {err})",
                        file=sys.stderr,
                        flush=True,
                    )

    def _emit(self, x: Exchange) -> None:
        start = x.end_ns - int(x.ms * 1e6)
        if self._root is None:
            attributes = {"loom.proxy.target": self.target.geturl() if self.target else ""}
            self._root = self.tracer.start_span(
                "loom.proxy.session", start_time=start, attributes=attributes
            )
        context = set_span_in_context(self._root)
        for effect in x.effects:
            kind = str(effect.get("kind") or "")
            if kind == "model":
                self._chat(x, effect, start, context)
            elif kind.startswith("tool:"):
                self._tool(effect, kind.removeprefix("tool:"), start, context)
            self.spans += 1

    def _chat(self, x: Exchange, effect: dict[str, Any], start: int, context: Any) -> None:
        result = as_dict(effect.get("result"))
        model = str(x.request.get("model") or "")
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider_name(x.dialect),
            "gen_ai.request.model": model,
            "loom.effect.seq": int(effect.get("seq") or 0),
            **response_attributes(x.request, x.response, x.dialect),
        }
        if self.target is not None and self.target.hostname:
            attributes["server.address"] = self.target.hostname
            attributes["server.port"] = self.target.port or (
                443 if self.target.scheme == "https" else 80
            )
        if self.content:
            system, messages = input_messages(x.request, x.dialect)
            finish = str(result.get("stop_reason") or "")
            attributes["gen_ai.input.messages"] = _json(messages)
            attributes["gen_ai.output.messages"] = _json(
                output_messages(x.response, x.dialect, finish)
            )
            if system:
                attributes["gen_ai.system_instructions"] = _json(system)
            if x.request.get("tools"):
                attributes["gen_ai.tool.definitions"] = _json(tool_definitions(x.request))
        span = self.tracer.start_span(
            f"chat {model}".strip(),
            context=context,
            kind=SpanKind.CLIENT,
            start_time=start,
            attributes=attributes,
        )
        span.end(end_time=x.end_ns)
        for call in result.get("tool_calls") or []:
            if isinstance(call, dict) and call.get("id"):
                self._calls[str(call["id"])] = (x.end_ns, str(call.get("name")), call.get("input"))

    def _tool(self, effect: dict[str, Any], name: str, start: int, context: Any) -> None:
        meta = as_dict(effect.get("meta"))
        call_id = str(meta.get("tuid") or "")
        asked, _name, arguments = self._calls.pop(call_id, (start, name, None))
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
            "loom.effect.seq": int(effect.get("seq") or 0),
        }
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = _json(arguments)
            attributes["gen_ai.tool.call.result"] = str(effect.get("result") or "")
        span = self.tracer.start_span(
            f"execute_tool {name}",
            context=context,
            kind=SpanKind.INTERNAL,
            start_time=min(asked, start),
            attributes=attributes,
        )
        span.end(end_time=start)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
