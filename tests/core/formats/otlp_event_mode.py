"""OpenLLMetry in its event mode: the agent's prompts and completions as OTLP log records.

The scripted travel agent (:mod:`tests.core.formats.otlp_agents`) with OpenLLMetry's
instrumentation created with ``use_legacy_attributes=False``: its spans keep the tokens,
its content goes to the Logs API. A fresh interpreter runs it (the mode is class-wide) and
writes what an exporter would, in the layouts the reader takes: a logs export beside the
traces, as protobuf (``run.otlp.pb`` + ``run.logs.otlp.pb``) and as JSON lines
(``lines.otlp.jsonl`` + ``lines.logs.otlp.jsonl``), and both in one file
(``mixed.otlp.jsonl``: a Collector's file exporter, ``resourceLogs`` lines among the
``resourceSpans`` ones).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from tests.core.formats.otlp_agents import Recorded, in_child

LAYOUTS = {
    "sibling protobuf": "run.otlp.pb",
    "sibling JSON lines": "lines.otlp.jsonl",
    "one file": "mixed.otlp.jsonl",
}


def run_event_mode(
    instrumentation: str,
    folder: Path,
    stream: bool = False,
    endpoint: str | None = None,
    root: bool = True,
) -> Recorded:
    """The agent with ``instrumentation`` in event mode; its files written in ``folder``;
    with ``endpoint``, its spans and log records also exported there over OTLP/HTTP;
    ``root``: inside an agent span (else each call is a trace of its own)."""
    spec = {"inst": instrumentation, "folder": str(folder), "stream": stream}
    spec |= {"endpoint": endpoint, "root": root}
    return in_child("tests.core.formats.otlp_event_mode:_child", spec, folder / "facts.json")


def _child(args: str) -> None:
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    from tests.core.formats import otlp_agents as agents
    from tests.core.formats.otlp_producers import (
        instrumented_events,
        logs_json,
        request_json,
        write_pb,
    )

    spec = json.loads(args)
    folder = Path(spec["folder"])
    setup = instrumented_events(spec["inst"], spec["endpoint"])
    with setup as (provider, spans, logs), agents._upstream() as up:
        rec = Recorded([], [])
        loop = agents._openai_loop if spec["inst"].endswith("openai") else agents._anthropic_loop
        agent = agents._agent_span(provider, "openllmetry", "travel") if spec["root"] else None
        with agent or contextlib.nullcontext():
            loop(up.url, provider, "openllmetry", ("call_b",), rec, spec["stream"])
        finished = list(spans.get_finished_spans())
        records = list(logs.get_finished_logs())
        requests = [s.body for s in up.seen]
    write_pb(folder / "run.otlp.pb", finished)
    (folder / "run.logs.otlp.pb").write_bytes(encode_logs(records).SerializeToString())
    span_lines = [json.dumps(request_json([s])) for s in finished]
    log_lines = [json.dumps(logs_json([r])) for r in records]
    (folder / "lines.otlp.jsonl").write_text("".join(x + "\n" for x in span_lines))
    (folder / "lines.logs.otlp.jsonl").write_text("".join(x + "\n" for x in log_lines))
    (folder / "mixed.otlp.jsonl").write_text("".join(x + "\n" for x in log_lines + span_lines))
    facts = {"requests": requests, "tool_calls": rec.tool_calls, "usage": rec.usage}
    (folder / "facts.json").write_text(json.dumps(facts))
