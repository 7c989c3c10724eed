"""Small hand-made harness-shaped traces for diff tests (written and checksummed like loom's).

Why hand-made as well as harness-recorded: a diff test needs two runs that differ
in exactly one chosen way (an inserted step, one word, one argument), which is
clearer to state as data than to coax out of a scripted agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom_core.formats.canonical import effect_key
from loom_core.formats.document import Document
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict


def model(
    text: str,
    calls: Sequence[tuple[str, str, dict[str, Any]]] = (),
    t_in: int = 100,
    t_out: int = 10,
    depth: int = 0,
    n: int = 0,
) -> dict[str, Any]:
    """A model effect; ``calls`` are (id, tool name, args); ``n`` makes its key distinct."""
    result = {
        "text": text,
        "tool_calls": [{"id": cid, "name": name, "input": args} for cid, name, args in calls],
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": {"input_tokens": t_in, "output_tokens": t_out},
    }
    return {
        "kind": "model",
        "key": effect_key("model", {"n": n}),
        "result": result,
        "depth": depth,
        "meta": {"agent": "worker"},
    }


def tool(name: str, result: Any, cid: str, args: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """A tool effect whose key hashes its call id and arguments, as the harness does."""
    kind = f"tool:{name}"
    return {
        "kind": kind,
        "key": effect_key(kind, {"id": cid, "input": args}),
        "result": result,
        "depth": depth,
        "meta": {"agent": "worker"},
    }


def write(path: Path, effects: list[dict[str, Any]], model_id: str = "claude-sonnet-4-5") -> Path:
    """Save ``effects`` (seqs assigned) as a version-2 harness trace at ``path``."""
    log = [
        {"seq": k, **{f: e[f] for f in ("kind", "key", "result", "depth", "meta")}}
        for k, e in enumerate(effects)
    ]
    text = next((e["result"]["text"] for e in reversed(log) if e["kind"] == "model"), "")
    save_dict(
        {
            "version": 2,
            "model": model_id,
            "system": "You work.",
            "prompt": "do it",
            "episodes": ["do it"],
            "output": text,
            "truncated": False,
            "paused": False,
            "pending": None,
            "pending_depth": 0,
            "stop_reason": "",
            "log": log,
        },
        path,
    )
    return path


def basic_run() -> list[dict[str, Any]]:
    """Read a file, search, answer: the base most tests change one thing in."""
    return [
        model("Let me read it.", [("c1", "read_file", {"path": "a.txt"})], 1000, 100, n=0),
        tool("read_file", "contents of a.txt", "c1", {"path": "a.txt"}),
        model("Now search.", [("c2", "search", {"query": "answer", "limit": 5})], 1200, 50, n=1),
        tool("search", '{"hits": [1, 2], "total": 2}', "c2", {"query": "answer", "limit": 5}),
        model("The answer is 42 for sure.", [], 1500, 20, n=2),
    ]


def pair(
    tmp: Path, a: list[dict[str, Any]], b: list[dict[str, Any]], **kw: Any
) -> tuple[Path, Path, Document, Document]:
    """Write two runs and load them."""
    pa, pb = write(tmp / "a.loom.json", a, **kw), write(tmp / "b.loom.json", b, **kw)
    return pa, pb, load(pa), load(pb)
