"""Measurement helpers shared by the benchmarks (no Qt import, so a headless child stays lean)."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_COMPILED: set[Path] = set()


def ensure_bytecode(root: Path) -> None:
    """Write checkout ``root``'s bytecode before its processes are timed, as ``make run`` and
    ``make test`` do: an editable install has none, and where PYTHONDONTWRITEBYTECODE is set
    (our CI machine) every start would recompile each of our modules from source (about
    0.2 s), which a user's installed app never does."""
    if root in _COMPILED:
        return
    packages = [str(root / name) for name in ("loom_core", "loom_desktop", "benchmarks")]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-j", "0", *packages],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    _COMPILED.add(root)


def _proc_self(name: str, key: str) -> int | None:
    """The number on ``key``'s line of /proc/self/``name``; None where there is none."""
    try:
        for line in Path("/proc/self", name).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM, not ru_maxrss: Linux carries
    ru_maxrss over fork+exec, so a child would report its parent's peak."""
    kib = _proc_self("status", "VmHWM:")
    if kib is None:
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024


def disk_read_mb() -> float:
    """What this process has had read from the disk itself so far (``read_bytes`` of
    /proc/self/io; 0 where there is none): near 0 when every file it opened was in the
    page cache, tens of MB for a cold start (the venv's libraries and bytecode read
    from the disk), which costs a GUI start about 0.2-0.3 s of CPU and more of wall."""
    return (_proc_self("io", "read_bytes:") or 0) / 1e6


def run_jsonl_reader(
    description: str,
    default_calls: int,
    make: Callable[[int], bytes],
    load: Callable[[bytes, str], Any],
    path: str,
) -> None:
    """The main of a JSON-lines reader's benchmark: a file of ``--calls`` model calls made by
    ``make``, read by ``load`` against a ``json.loads`` of each line, then its timeline."""
    from benchmarks.open_trace import _median
    from loom_core.views.timeline import build_timeline

    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--calls", type=int, default=default_calls)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = make(args.calls)
    json_s = _median(lambda: [json.loads(line) for line in data.splitlines()])
    load_s = _median(lambda: load(data, path))
    doc = load(data, path)
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
