"""Shared assertions for proxy traces: loom-harness's own recorder is the oracle.

Why an oracle: §6.3's wire -> effects algorithm has many small rules (tool effects
before the model effect that carries their results, names from earlier responses,
episode de-duplication...). Feeding loom-harness's ``WireRecorder`` the very
requests the upstream received and the responses we recorded must give the same
log, episodes and systems as our proxy wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loom.proxy import WireRecorder as LoomRecorder

from loom_core.proxy.sidecar import read_sidecar
from tests.core.proxy.fake_upstream import FakeUpstream


def without_sys_role(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``meta.sys_role`` is loom's best-effort heuristic label; we do not write it (§1.2)."""
    return [
        {**e, "meta": {k: v for k, v in e.get("meta", {}).items() if k != "sys_role"}} for e in log
    ]


def model_requests(upstream: FakeUpstream) -> list[dict[str, Any]]:
    return [s.body for s in upstream.seen if not s.path.endswith("count_tokens")]


def matches_loom_recorder(trace: dict[str, Any], requests: list[dict[str, Any]]) -> None:
    """Our trace == loom-harness's recorder fed the same exchanges."""
    assert len(requests) == len(trace["wire"])
    theirs = LoomRecorder()
    for request, response in zip(requests, trace["wire"], strict=True):
        theirs.record(request, response)
    expected = theirs.to_dict()
    assert without_sys_role(trace["log"]) == without_sys_role(expected["log"])
    for member in ("model", "system", "systems", "prompt", "episodes", "output", "wire"):
        assert trace[member] == expected[member], member


def sidecar_requests_exact(save: Path, requests: list[dict[str, Any]]) -> None:
    """The sidecar rebuilds every forwarded request exactly (same members, same order)."""
    base = str(save)[: -len(".loom.json")]
    sidecar = read_sidecar(base + ".exchanges.jsonl")
    rebuilt = [x.request for x in sidecar.exchanges]
    assert rebuilt == requests
    assert [list(r) for r in rebuilt] == [list(r) for r in requests]  # member order too
    assert sidecar.ended and sidecar.skipped == 0


def anthropic_seen(message: Any) -> dict[str, Any]:
    """What an Anthropic SDK client saw, in wire terms."""
    blocks = []
    for b in message.content:
        if b.type == "text":
            blocks.append({"type": "text", "text": b.text})
        else:
            blocks.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
    return {
        "id": message.id,
        "content": blocks,
        "stop_reason": message.stop_reason,
        "usage": (message.usage.input_tokens, message.usage.output_tokens),
    }


def anthropic_wire(entry: dict[str, Any]) -> dict[str, Any]:
    blocks = [
        {k: b[k] for k in ("type", "text", "id", "name", "input") if k in b}
        for b in entry["content"]
    ]
    return {
        "id": entry["id"],
        "content": blocks,
        "stop_reason": entry["stop_reason"],
        "usage": (entry["usage"]["input_tokens"], entry["usage"]["output_tokens"]),
    }


def stop_and_check(rig: Any) -> dict[str, Any]:
    """Finalize the rig's proxy and return its trace, after the checks every recording
    must pass: loom-harness accepts it, no API key was written anywhere, loom-harness's
    own recorder rebuilds the same log from the requests, and the sidecar keeps each
    request exactly."""
    from tests.core.proxy.harness import grep_keys, loom_accepts

    trace = rig.stop()
    loom_accepts(rig.save)
    assert grep_keys(rig.tmp) == []  # the API keys rode in headers: never written
    requests = model_requests(rig.upstream)
    matches_loom_recorder(trace, requests)
    sidecar_requests_exact(rig.save, requests)
    return trace
