"""How fast a run becomes a page, how big it is, and how fast Chromium opens it.

    python benchmarks/export_html.py --effects 10000 [--effects 100000] [--json]

Per size: export seconds (load + page build + write, in this process; goal < 2 s at
10,000), page bytes / trace bytes (goal < 10×), and in headless Chromium (Debian's package,
skipped when absent) the seconds from navigation to the page's ready mark (goal < 2 s) and
one scrub step (ArrowDown → the new step drawn). Goals are for a 10,000-step run; larger
runs are reported against the same numbers without a goal ("must still export and open").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.chromium_cdp import Browser, chromium_binary
from benchmarks.synth import write_synth

GOALS = {"export_s": 2.0, "size_ratio": 10.0, "open_s": 2.0}


def _export(trace: Path, page: Path) -> float:
    from loom_core.export.html import write_page
    from loom_core.formats.loader import load

    start = time.perf_counter()
    write_page(load(trace), page)
    return time.perf_counter() - start


async def _browse(page: Path) -> dict[str, float]:
    async with Browser(timeout=300) as b:
        open_s = await b.open(page.as_uri())
        start = time.perf_counter()
        before = await b.eval("document.body.dataset.step")
        await b.key("ArrowDown", 40)
        await b.wait_for(f"document.body.dataset.step !== '{before}'")
        return {"open_s": open_s, "scrub_ms": (time.perf_counter() - start) * 1000}


def measure(effects: int, folder: Path) -> dict[str, Any]:
    trace = write_synth(folder / f"synth{effects}.loom.json", effects)
    page = folder / f"synth{effects}.html"
    out: dict[str, Any] = {"effects": effects, "export_s": _export(trace, page)}
    out["trace_bytes"], out["page_bytes"] = trace.stat().st_size, page.stat().st_size
    out["size_ratio"] = out["page_bytes"] / out["trace_bytes"]
    if chromium_binary() is not None:
        out.update(asyncio.run(_browse(page)))
    else:
        out["browser"] = "chromium not installed: open time not measured"
    if effects <= 10_000:
        out["goals"] = {
            k: {"goal": f"< {g}", "met": out[k] < g} for k, g in GOALS.items() if k in out
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--effects", type=int, action="append")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.effects or [10_000]:
            result = measure(n, Path(tmp))
            if args.json:
                print(json.dumps(result))
                continue
            print(
                f"{n:,} effects: export {result['export_s']:.2f} s (goal < 2 s at 10k), page "
                f"{result['size_ratio']:.2f}× the trace (goal < 10×), Chromium open "
                f"{result.get('open_s', float('nan')):.2f} s (goal < 2 s at 10k), scrub "
                f"{result.get('scrub_ms', float('nan')):.0f} ms"
            )


if __name__ == "__main__":
    main()
