"""The members every writer of a loom trace lays out the same way (loom-format.md §1.1, §1.2).

One definition for the sample generator, the wire recorder and the foreign readers, so an
effect entry or a finished run's header cannot differ between them by accident.
"""

from __future__ import annotations

from typing import Any

from loom_core.formats.canonical import effect_key


def effect_entry(
    seq: int, kind: str, payload: Any, result: Any, depth: int, meta: dict[str, Any] | None
) -> dict[str, Any]:
    """``{seq, kind, key, result, depth[, meta]}``; ``key`` hashes ``payload`` (§3)."""
    entry: dict[str, Any] = {
        "seq": seq,
        "kind": kind,
        "key": effect_key(kind, payload),
        "result": result,
        "depth": depth,
    }
    if meta:
        entry["meta"] = meta
    return entry


def finished_run(model: str, system: str, episodes: list[str], output: str) -> dict[str, Any]:
    """A run that ran to its end: ``version`` … ``stop_reason`` in the harness's order
    (``prompt`` is the first episode); the caller adds ``log`` and its own members."""
    return {
        "version": 2,
        "model": model,
        "system": system,
        "prompt": episodes[0] if episodes else "",
        "episodes": list(episodes),
        "output": output,
        "truncated": False,
        "paused": False,
        "pending": None,
        "pending_depth": 0,
        "stop_reason": "",
    }
