"""Benchmark: read an N-call Claude Code transcript; print one JSON line.

    python benchmarks/open_claude_code.py --calls 2000 --json

The transcript is built like the tests' fixtures (Claude Code has no producer library):
every response streamed as three lines (thinking, text, tool_use) plus a tool result.
Figures (medians of 3): ``json_lines_s`` a plain ``json.loads`` of every line (the least
any reader must do), ``load_s`` the reader (lines, merging, the loom trace and its
checksum), ``timeline_s`` the derived views on top, ``ratio`` load / json_lines: what a
live tab's re-read costs against parsing the file at all.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.open_trace import _median  # noqa: E402 - after the path is set


def transcript(calls: int) -> bytes:
    from tests.core.formats.claude_fixtures import Session, text, thinking, tool_use

    s = Session()
    for n in range(calls):
        if n % 20 == 0:
            s.prompt(f"prompt {n}")
        s.reply(
            [thinking("hmm " * 50), text("doing " * 40), tool_use(f"t{n}", "Bash", command="ls")],
            usage=(100, 50, 1000, 10),
        )
        s.result(f"t{n}", "output line\n" * 60)
    return s.data()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from loom_core.formats.claude_code import load_claude_code
    from loom_core.views.timeline import build_timeline

    data = transcript(args.calls)
    json_s = _median(lambda: [json.loads(line) for line in data.splitlines()])
    load_s = _median(lambda: load_claude_code(data, "/bench/s.jsonl"))
    doc = load_claude_code(data, "/bench/s.jsonl")
    timeline_s = _median(lambda: build_timeline(doc))
    out = {
        "calls": args.calls,
        "mb": round(len(data) / 1e6, 2),
        "effects": len(doc.effects),
        "json_lines_s": round(json_s, 3),
        "load_s": round(load_s, 3),
        "timeline_s": round(timeline_s, 3),
        "ratio": round(load_s / json_s, 2),
    }
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))


if __name__ == "__main__":
    main()
