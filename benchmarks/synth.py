"""Synthetic but realistically sized harness traces for benchmarks.

Model effects carry text, tool calls and usage; tool results are 200-2,000
characters; every 50th step is a sub-agent delegation and every 97th tool
result is an error, so the timeline has all its features to draw.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loom_core.formats.canonical import (  # noqa: E402
    CHECKSUM_PREFIX,
    canonical_bytes,
    checksum,
    effect_key,
)

_WORDS = (
    "alpha beta gamma delta file config error result value user agent model "
    "token context search index table query update report summary"
).split()


def _text(rng: random.Random, n_chars: int) -> str:
    """Words drawn as ``rng.choice(_WORDS)`` draws them, without its two calls per word.

    ``Random.choice`` takes ``getrandbits(bit_length)`` until it is below the length; the
    same draws inline make the same text three times faster (the 10,000,000-effect run
    draws about a billion words)."""
    out: list[str] = []
    draw = rng.getrandbits
    n_words = len(_WORDS)
    bits = n_words.bit_length()
    size = 0
    while size < n_chars:
        r = draw(bits)
        while r >= n_words:
            r = draw(bits)
        w = _WORDS[r]
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


def _entries(n_effects: int, seed: int) -> Iterator[dict]:
    """The log's entries in order, one at a time: what both writers below are built from.

    The last entry is held back one step, since a run ending on a model call ends its
    turn there (no tool calls, ``end_turn``)."""
    rng = random.Random(seed)
    held: dict | None = None
    seq = 0
    while seq < n_effects:
        depth = 1 if (seq // 50) % 7 == 3 else 0
        tool = rng.choice(("read_file", "search", "run_tests"))
        call_id = f"call_{seq}"
        if held is not None:
            yield held
        held = _model(rng, seq, depth, call_id, tool)
        seq += 1
        if seq >= n_effects:
            break
        body = _text(rng, rng.randint(200, 2000))
        if seq % 97 == 0:
            body = "ERROR: RuntimeError: " + body[:200]
        kind = f"tool:{tool}"
        yield held
        held = {
            "seq": seq,
            "kind": kind,
            "key": effect_key(kind, {"id": call_id, "input": {}}),
            "result": body,
            "depth": depth,
            "meta": {"agent": "lead" if depth == 0 else "helper"},
        }
        seq += 1
    if held is not None:
        if held["kind"] == "model":
            held["result"]["tool_calls"] = []
            held["result"]["stop_reason"] = "end_turn"
        yield held


def _header(output: str) -> dict:
    """The trace's members other than its log and checksum, in the file's order."""
    return {
        "version": 2,
        "model": "claude-sonnet-4-5",
        "system": "You are a careful coding agent.",
        "prompt": "fix the failing tests",
        "episodes": ["fix the failing tests"],
        "output": output,
        "truncated": False,
        "paused": False,
        "pending": None,
        "pending_depth": 0,
        "stop_reason": "",
    }


def synth_trace(n_effects: int, seed: int = 7) -> dict:
    """A version-2 harness-shaped trace with ``n_effects`` effects and a valid checksum."""
    log = list(_entries(n_effects, seed))
    output = next((e["result"]["text"] for e in reversed(log) if e["kind"] == "model"), "")
    doc = {**_header(output), "log": log}
    doc["checksum"] = checksum(doc)
    return doc


def write_synth(path: Path, n_effects: int) -> Path:
    """Write a synthetic trace the way loom-harness lays files out (indent 2)."""
    path.write_text(json.dumps(synth_trace(n_effects), indent=2))
    return path


def _last_output(n_effects: int, seed: int) -> str:
    """The run's ``output`` (its last model text): a first pass, since the file names it before the log."""
    output = ""
    for entry in _entries(n_effects, seed):
        if entry["kind"] == "model":
            output = entry["result"]["text"]
    return output


def stream_synth(path: Path, n_effects: int, seed: int = 7) -> Path:
    """Write the same bytes as ``write_synth`` in constant memory, an entry at a time.

    For runs too big to build in memory (10,000,000 effects is about 10 GB on disk and
    would be about 30 GB as Python objects). The entries are generated twice: once for
    the ``output`` member, which the file holds before the log, then to be written. The
    checksum's canonical JSON (sorted keys, the log second) is hashed as the entries go.
    """
    header = _header(_last_output(n_effects, seed))
    head = json.dumps({**header, "log": []}, indent=2)
    assert head.endswith('"log": []\n}')
    digest = hashlib.sha256()
    body_keys = sorted([*header, "log"])
    first = body_keys.index("log")
    canon_head = ", ".join(f"{json.dumps(k)}: {_canon(header[k])}" for k in body_keys[:first])
    canon_tail = ", ".join(f"{json.dumps(k)}: {_canon(header[k])}" for k in body_keys[first + 1 :])
    digest.update(f'{{{canon_head}, "log": ['.encode())
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(head[: -len("[]\n}")] + "[")
        for n, entry in enumerate(_entries(n_effects, seed)):
            sep = ", " if n else ""
            digest.update(f"{sep}{_canon(entry)}".encode())
            out.write(",\n    " if n else "\n    ")
            out.write(_indented(entry))
        out.write("\n  ]" if n_effects else "]")
        digest.update(f"], {canon_tail}}}".encode())
        out.write(f',\n  "checksum": "{CHECKSUM_PREFIX}{digest.hexdigest()}"\n}}')
    return path


def _canon(value: object) -> str:
    return canonical_bytes(value).decode("utf-8")


def _indented(entry: dict) -> str:
    """``json.dumps(entry, indent=2)`` at a log entry's depth: msgspec lays out the C encoder's
    line (the same bytes, checked by ``_check``) in a third of the pure-Python indenter's time."""
    return msgspec.json.format(json.dumps(entry), indent=2).replace("\n", "\n    ")


def _check(folder: Path) -> None:
    """The streamed bytes must be the in-memory builder's, at a few small sizes."""
    for n in (0, 1, 2, 3, 1001):
        expected = json.dumps(synth_trace(n), indent=2).encode()
        if stream_synth(folder / "check.loom.json", n).read_bytes() != expected:
            raise SystemExit(f"stream_synth differs from synth_trace at {n} effects")
    (folder / "check.loom.json").unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description="Write a synthetic trace in constant memory.")
    parser.add_argument("--effects", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _check(args.out.parent)
    wall, cpu = time.perf_counter(), time.process_time()
    tmp = args.out.with_name(args.out.name + ".tmp")
    stream_synth(tmp, args.effects, args.seed).rename(args.out)
    figures = {
        "effects": args.effects,
        "bytes": args.out.stat().st_size,
        "wall_s": round(time.perf_counter() - wall, 1),
        "cpu_s": round(time.process_time() - cpu, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
