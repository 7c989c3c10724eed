"""Benchmark: the step filter over every step of a big run; prints one JSON line.

    python benchmarks/filter_search.py --effects 100000 1000000

For each query, the time until the first batch of matches is handed out (what the
step list shows first) and until the search is complete, the way the filter box
runs it (:func:`loom_core.views.filtering.filter_steps` in one worker thread).
Every query is timed twice: the first search of a run also builds what it scans
(the kind-name column for ``tool:``, the lowercased text column for text:
``text_column_mb``, kept while the run is open); later ones only scan. ``tool:run_tests`` stands for ``tool:bash`` (the synthetic run's tools are
read_file, search and run_tests). Goal: every search complete in under 300 ms at
1,000,000 effects.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL_MS = 300.0
QUERIES = {
    "tool": "tool:run_tests",
    "text_rare": "runtimeerror",  # every 97th tool result
    "text_common": "gamma delta",  # two words most steps hold
    "text_absent": "no step says this",
    "mixed": "tool:search is:subagent alpha",
}


def _time(tl: Any, text: str) -> tuple[float, float, int]:
    from loom_core.views.filtering import filter_steps

    start = time.perf_counter()
    first: list[float] = []

    def found(_batch: object) -> None:
        if not first:
            first.append(time.perf_counter() - start)

    rows = filter_steps(tl, text, found=found)
    total = time.perf_counter() - start
    return (first[0] if first else total) * 1000, total * 1000, len(rows or ())


def measure(n: int) -> dict[str, Any]:
    from benchmarks.open_trace import trace_file
    from loom_core.formats.progressive import load_progressive
    from loom_core.views.step_index import step_index

    tl = load_progressive(str(trace_file(n))).timeline
    out: dict[str, Any] = {"effects": n, "steps": len(tl)}
    for name, text in QUERIES.items():
        for run in ("first", "again"):
            first_ms, all_ms, count = _time(tl, text)
            out[f"{name}_{run}"] = {
                "query": text,
                "first_result_ms": round(first_ms, 1),
                "all_results_ms": round(all_ms, 1),
                "matches": count,
                "goal_ms": GOAL_MS,
                "met": all_ms < GOAL_MS,
            }
    chunks = step_index(tl).text_chunks(tl, len(tl), lambda: False)
    out["text_column_mb"] = round(sum(len(c.blob) for c in chunks) / 1e6, 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--effects", type=int, nargs="+", default=[100_000, 1_000_000])
    args = parser.parse_args()
    print(json.dumps({"filter": [measure(n) for n in args.effects]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
