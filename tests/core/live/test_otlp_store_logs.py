"""Log records the receiver files (POST /v1/logs): with their trace's spans when those come,
in files of their own when they never do -- never dropped (issue 22, item 2). The end to
end test with a real producer is in tests/core/formats/test_otlp_logs.py."""

from __future__ import annotations

import json
from pathlib import Path

from loom_core.live.otlp_store import GROUP_GAP, TraceStore

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPANS = {
    "resourceSpans": [
        {
            "scopeSpans": [
                {
                    "spans": [
                        {
                            "traceId": TRACE,
                            "spanId": "b7ad6b7169203331",
                            "name": "invoke_agent a",
                            "attributes": [
                                {
                                    "key": "gen_ai.operation.name",
                                    "value": {"stringValue": "invoke_agent"},
                                }
                            ],
                        }
                    ]
                }
            ]
        }
    ]
}


def _logs(trace_id: str, text: str) -> dict[str, object]:
    record = {
        "traceId": trace_id,
        "eventName": "gen_ai.user.message",
        "body": {"stringValue": text},
    }
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_logs_wait_for_their_spans_then_follow_them(tmp_path: Path) -> None:
    clock = _Clock()
    store = TraceStore(tmp_path, clock)
    assert store.append_logs(TRACE, _logs(TRACE, "early")) is None  # no file yet
    assert store.append_logs("", _logs("", "untraced")) is None  # nothing got spans yet
    path = store.append(TRACE, SPANS, 1)
    assert store.append_logs(TRACE, _logs(TRACE, "late")) == path
    clock.now = 1.0
    assert store.append_logs("", _logs("", "soon after")) == path  # the file that last got spans
    clock.now = 2.0 + GROUP_GAP
    assert store.append_logs("", _logs("", "much later")) is None
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    texts = [
        r["body"]["stringValue"]
        for line in lines
        for rl in line.get("resourceLogs", [])
        for sl in rl["scopeLogs"]
        for r in sl["logRecords"]
    ]
    assert "resourceSpans" in lines[0] and texts == ["early", "untraced", "late", "soon after"]
    assert store.close() == [tmp_path / "untraced.logs.otlp.jsonl"]
    assert "much later" in (tmp_path / "untraced.logs.otlp.jsonl").read_text()


def test_logs_whose_spans_never_came_are_kept_on_close(tmp_path: Path) -> None:
    store = TraceStore(tmp_path)
    store.append_logs(TRACE, _logs(TRACE, "orphan"))
    (kept,) = store.close()
    assert kept == tmp_path / f"{TRACE}.logs.otlp.jsonl" and "orphan" in kept.read_text()
    assert store.close() == []  # once
