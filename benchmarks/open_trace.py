"""Benchmark: open an N-effect trace headless and in the GUI; print one JSON line.

    python benchmarks/open_trace.py --effects 100000 --json

Figures (medians where repeated): ``json_parse_s`` a plain ``json.loads`` of the
bytes; ``core_load_s`` loom_core loading them into its structures;
``timeline_s`` building the derived per-step views; ``first_paint_s`` /
``ready_s`` from GUI process start to the first screen of steps / to the whole
run being interactive; ``scrub_ms_p99`` one step move end to end (session,
list, timeline cursor, context view, repaint) at positions spread over the run;
``peak_rss_mb`` of the GUI process (Qt included) and ``core_peak_rss_mb`` of a
headless load; ``summary_s`` the headless ``summary --json``
process vs ``json_process_s`` a process that only does ``json.load``; and
loom-harness's ``Run.load`` on the same file when it is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _median(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def trace_file(n: int) -> Path:
    """Generate (once, cached under .bench/) a synthetic trace with ``n`` effects."""
    from benchmarks.synth import write_synth

    path = Path(os.environ.get("LOOM_BENCH_DIR", ROOT / ".bench")) / f"synth-{n}.loom.json"
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        write_synth(path.with_suffix(".tmp"), n)
        path.with_suffix(".tmp").rename(path)
    return path


def headless(path: Path) -> dict[str, float]:
    from loom_core.formats.gc_pause import gc_paused
    from loom_core.formats.loader import load
    from loom_core.views.timeline import build_timeline

    data = path.read_bytes()
    out = {
        "json_parse_s": _median(lambda: json.loads(data)),
        "core_load_s": _median(lambda: load(path)),
    }
    doc = load(path)

    def timeline() -> None:
        with gc_paused():
            build_timeline(doc)

    out["timeline_s"] = _median(timeline)
    return out


_CORE_RSS = """
import sys
sys.path.insert(0, {root!r})
from benchmarks.measure import peak_rss_mb
from loom_core.formats.progressive import load_progressive
load_progressive({path!r})
print(peak_rss_mb())
"""


def core_rss(path: Path) -> dict[str, float]:
    """Peak memory of a headless process that loads the trace and builds its timeline."""
    code = _CORE_RSS.format(root=str(ROOT), path=str(path))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return {"core_peak_rss_mb": float(out.stdout.strip())}


def processes(path: Path) -> dict[str, float]:
    py = sys.executable
    plain = _median(
        lambda: subprocess.run(
            [py, "-c", f"import json; json.load(open({str(path)!r}))"], check=True
        ),
        3,
    )
    summary = _median(
        lambda: subprocess.run(
            [py, "-m", "loom_core", "summary", "--json", str(path)],
            check=True,
            stdout=subprocess.DEVNULL,
        ),
        3,
    )
    return {"json_process_s": plain, "summary_s": summary}


def harness(path: Path) -> dict[str, float]:
    try:
        import warnings

        from loom import Run
    except ImportError:
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"harness_load_s": _median(lambda: Run.load(str(path)), 1)}


def gui(path: Path) -> dict[str, float]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    start = time.time()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gui_probe.py"), str(path), repr(start)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise SystemExit(f"gui probe failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--effects", type=int, default=100_000)
    parser.add_argument("--json", action="store_true", help="print only the JSON line")
    parser.add_argument("--no-gui", action="store_true")
    args = parser.parse_args()
    path = trace_file(args.effects)
    size_mb = path.stat().st_size / 1e6
    result: dict[str, float | int] = {"effects": args.effects, "file_mb": round(size_mb, 1)}
    result.update(headless(path))
    if not args.no_gui:
        result.update(gui(path))
    result.update(processes(path))
    result.update(core_rss(path))
    result.update(harness(path))
    result["ratio_core_to_parse"] = result["core_load_s"] / result["json_parse_s"]
    result["ratio_summary_to_json_process"] = result["summary_s"] / result["json_process_s"]
    if "harness_load_s" in result:
        result["ratio_core_to_harness"] = result["core_load_s"] / result["harness_load_s"]
    if "peak_rss_mb" in result:
        result["ratio_rss_to_file"] = result["peak_rss_mb"] / size_mb
    result["ratio_core_rss_to_file"] = result["core_peak_rss_mb"] / size_mb
    rounded = {k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}
    print(json.dumps(rounded))
    return 0


if __name__ == "__main__":
    sys.exit(main())
