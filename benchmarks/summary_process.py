"""Benchmark: a ``summary --json`` process against a process that only ``json.load``s
the same trace; prints one JSON line.

    python benchmarks/summary_process.py --effects 100000 1000000

Both are whole processes (interpreter start, imports, reading the file), run
alternately ``--repeat`` times; the figures are medians of wall time, with the CPU
time (user + system, the summary's forked checksum child included) beside them and
the machine's load average, since on a shared machine wall time follows the load.
Goal: summary ≤ 1.5x the json.load process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL = 1.5


def _run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(n: int, repeat: int) -> dict[str, Any]:
    from benchmarks.measure import ensure_bytecode
    from benchmarks.open_trace import trace_file

    ensure_bytecode(ROOT)
    path = str(trace_file(n))
    py = sys.executable
    plain = [py, "-c", f"import json; json.load(open({path!r}))"]
    summary = [py, "-m", "loom_core", "summary", "--json", path]
    runs: dict[str, list[tuple[float, float]]] = {"json": [], "summary": []}
    load = os.getloadavg()[0]
    for _ in range(repeat):
        runs["json"].append(_run(plain))
        runs["summary"].append(_run(summary))
    out: dict[str, Any] = {"effects": n, "file_mb": round(os.path.getsize(path) / 1e6, 1)}
    for name, values in runs.items():
        out[f"{name}_process_s"] = round(statistics.median(w for w, _ in values), 3)
        out[f"{name}_cpu_s"] = round(statistics.median(c for _, c in values), 3)
    ratio = out["summary_process_s"] / out["json_process_s"]
    out["ratio_summary_to_json_process"] = round(ratio, 2)
    out["ratio_cpu"] = round(out["summary_cpu_s"] / out["json_cpu_s"], 2)
    out["goal"] = f"<= {GOAL}x"
    out["met"] = ratio <= GOAL
    out["load_average"] = round((load + os.getloadavg()[0]) / 2, 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--effects", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps({"summary": [measure(n, args.repeat) for n in args.effects]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
