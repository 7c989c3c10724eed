"""Benchmark: read an N-call OpenTelemetry trace (OTLP JSON lines); print one JSON line.

    python benchmarks/open_otlp.py --calls 500 --json

The trace is what a GenAI-instrumented agent with content capture writes: an
``invoke_agent`` span, then per turn a ``chat`` span whose ``gen_ai.input.messages`` holds
the whole history so far (so the file grows with the square of the run) and an
``execute_tool`` span; 50 spans per request line, as a batch exporter sends them.
Figures (medians of 3): ``json_lines_s`` a plain ``json.loads`` of every line,
``load_s`` the reader (spans, messages, the loom trace and its checksum), ``timeline_s``
the derived views, ``ratio`` load / json_lines.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.measure import run_jsonl_reader  # noqa: E402 - after the path is set


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(n: int, name: str, attrs: dict[str, Any], parent: int = 1) -> dict[str, Any]:
    return {
        "traceId": "ab" * 16,
        "spanId": f"{n:016x}",
        "parentSpanId": f"{parent:016x}" if n != parent else "",
        "name": name,
        "startTimeUnixNano": str(n * 1000),
        "endTimeUnixNano": str(n * 1000 + 500),
        "attributes": [_kv(k, v) for k, v in attrs.items()],
    }


def trace(calls: int) -> bytes:
    spans = [_span(1, "invoke_agent", {"gen_ai.operation.name": "invoke_agent"})]
    history: list[dict[str, Any]] = [
        {"role": "user", "parts": [{"type": "text", "content": "do the task " * 20}]}
    ]
    for i in range(calls):
        call = {"type": "tool_call", "id": f"c{i}", "name": "bash", "arguments": {"cmd": "ls"}}
        out = [{"role": "assistant", "parts": [{"type": "text", "content": "ok " * 30}, call]}]
        chat = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps(out),
            "gen_ai.usage.input_tokens": 1000 + 50 * i,
            "gen_ai.usage.output_tokens": 40,
        }
        result = "output line\n" * 30
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "bash",
            "gen_ai.tool.call.id": f"c{i}",
            "gen_ai.tool.call.result": result,
        }
        spans += [_span(2 * i + 2, "chat", chat), _span(2 * i + 3, "execute_tool bash", tool)]
        response = {"type": "tool_call_response", "id": f"c{i}", "response": result}
        history += out + [{"role": "tool", "parts": [response]}]
    lines = (
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans[i : i + 50]}]}]})
        for i in range(0, len(spans), 50)
    )
    return "".join(line + "\n" for line in lines).encode()


def main() -> None:
    from loom_core.formats.otlp import load_otlp

    run_jsonl_reader(__doc__ or "", 500, trace, load_otlp, "/bench/run.otlp.jsonl")


if __name__ == "__main__":
    main()
