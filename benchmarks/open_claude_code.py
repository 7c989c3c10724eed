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

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.measure import run_jsonl_reader  # noqa: E402 - after the path is set


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
    from loom_core.formats.claude_code import load_claude_code

    run_jsonl_reader(__doc__ or "", 2000, transcript, load_claude_code, "/bench/s.jsonl")


if __name__ == "__main__":
    main()
