"""Benchmark: the GUI's first paint and ready time from process start, against another checkout.

    python benchmarks/first_paint.py --effects 10000 --runs 5 [--against /path/to/old/checkout]

Each run is a new GUI process (offscreen, its own run library) opening the same synthetic
trace: ``benchmarks/gui_probe.py`` reports when the step list first painted rows and when the
whole run was shown, in wall time and in the CPU time the process had used by then. With
``--against``, the other checkout's app opens the same file in alternate runs, so both see
the same machine load; the medians and their ratio are printed. CPU is the figure to read on
a shared machine (wall time there is mostly waiting for a core). Each checkout first opens
the file once untimed, so no timed run is a cold start (its libraries read from the disk).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ("first_paint_cpu_s", "first_paint_s", "ready_cpu_s", "ready_s")


def probe(root: Path, trace: Path) -> dict[str, float]:
    """One GUI process of checkout ``root`` opening ``trace``: its figures."""
    from benchmarks.open_trace import gui

    result = gui(trace, root=root)
    return {k: float(result[k]) for k in FIGURES}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--effects", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, run alternately")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from benchmarks.open_trace import trace_file

    trace = trace_file(args.effects)
    roots = {"this": ROOT, **({"against": args.against.resolve()} if args.against else {})}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in roots}
    for root in roots.values():  # untimed: each checkout's first start reads its files
        probe(root, trace)  # from the disk when the page cache lost them (a cold start)
    for _ in range(args.runs):
        for name, root in roots.items():
            runs[name].append(probe(root, trace))
    out: dict[str, object] = {"effects": args.effects, "runs": args.runs}
    for name, results in runs.items():
        out[name] = {k: round(statistics.median(r[k] for r in results), 3) for k in FIGURES}
    if args.against:
        this, other = out["this"], out["against"]
        assert isinstance(this, dict) and isinstance(other, dict)
        out["ratio_this_to_against"] = {k: round(this[k] / other[k], 3) for k in FIGURES}
    out["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
