"""Synthetic but realistically sized harness traces for benchmarks.

Model effects carry text, tool calls and usage; tool results are 200-2,000
characters; every 50th step is a sub-agent delegation and every 97th tool
result is an error, so the timeline has all its features to draw.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from loom_core.formats.canonical import checksum, effect_key

_WORDS = (
    "alpha beta gamma delta file config error result value user agent model "
    "token context search index table query update report summary"
).split()


def _text(rng: random.Random, n_chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < n_chars:
        w = rng.choice(_WORDS)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n_chars]


def _model(rng: random.Random, seq: int, depth: int, call_id: str, tool: str) -> dict:
    result = {
        "text": _text(rng, rng.randint(40, 400)),
        "tool_calls": [
            {
                "id": call_id,
                "name": tool,
                "input": {"path": f"src/{seq}.py", "query": _text(rng, 30)},
            }
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1000 + seq % 5000, "output_tokens": rng.randint(20, 400)},
    }
    return {
        "seq": seq,
        "kind": "model",
        "key": effect_key("model", {"n": seq}),
        "result": result,
        "depth": depth,
        "meta": {"agent": "lead" if depth == 0 else "helper"},
    }


def synth_trace(n_effects: int, seed: int = 7) -> dict:
    """A version-2 harness-shaped trace with ``n_effects`` effects and a valid checksum."""
    rng = random.Random(seed)
    log: list[dict] = []
    seq = 0
    while seq < n_effects:
        depth = 1 if (seq // 50) % 7 == 3 else 0
        tool = rng.choice(("read_file", "search", "run_tests"))
        call_id = f"call_{seq}"
        log.append(_model(rng, seq, depth, call_id, tool))
        seq += 1
        if seq >= n_effects:
            break
        body = _text(rng, rng.randint(200, 2000))
        if seq % 97 == 0:
            body = "ERROR: RuntimeError: " + body[:200]
        kind = f"tool:{tool}"
        log.append(
            {
                "seq": seq,
                "kind": kind,
                "key": effect_key(kind, {"id": call_id, "input": {}}),
                "result": body,
                "depth": depth,
                "meta": {"agent": "lead" if depth == 0 else "helper"},
            }
        )
        seq += 1
    if log and log[-1]["kind"] == "model":
        log[-1]["result"]["tool_calls"] = []
        log[-1]["result"]["stop_reason"] = "end_turn"
    doc = {
        "version": 2,
        "model": "claude-sonnet-4-5",
        "system": "You are a careful coding agent.",
        "prompt": "fix the failing tests",
        "episodes": ["fix the failing tests"],
        "output": next((e["result"]["text"] for e in reversed(log) if e["kind"] == "model"), ""),
        "truncated": False,
        "paused": False,
        "pending": None,
        "pending_depth": 0,
        "stop_reason": "",
        "log": log,
    }
    doc["checksum"] = checksum(doc)
    return doc


def write_synth(path: Path, n_effects: int) -> Path:
    """Write a synthetic trace the way loom-harness lays files out (indent 2)."""
    path.write_text(json.dumps(synth_trace(n_effects), indent=2))
    return path
