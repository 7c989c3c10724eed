"""Benchmark: the CPU a live Claude Code tab spends per appended line, whole re-read vs offset.

    python benchmarks/follow_claude_code.py --copies 13 --json

A long real session: the largest real transcript beside the repository
(``../shared/real-world``, or ``--source``), repeated ``--copies`` times with its ids made
unique per copy (uuid5 of the id and the copy; ``msg_``/``toolu_``/``req_`` ids suffixed),
so the copies are one long conversation's turns rather than one turn's duplicates: 13
copies are 45 MB, 4,600 steps. All but the last ``--lines`` lines are written; then, one
line at a time, a line is appended and the run read both ways, alternating: the reader's
whole ``load`` of the file (what the live tab did on every change) and the offset follower
(:mod:`loom_core.live.appended`). Each is timed in CPU (``time.process_time``, this
process only) alone and with the timeline index the tab builds on its tailer thread
after each read. Prints the medians per appended line, their ratio, the goal (the offset
follower at most :data:`GOAL_RATIO` of the whole re-read's CPU, the index included) and
met / not met, and the load average.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL_RATIO = 0.5
REAL = ROOT.parent / "shared" / "real-world" / "files" / "claude-code"
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_IDS = re.compile(rb"\b(msg_|toolu_|req_)([A-Za-z0-9]+)")


def long_session(src: bytes, copies: int) -> bytes:
    """``src`` repeated, each copy's ids unique; the session id (the most common uuid) kept."""
    found = _UUID.findall(src)
    session = max(set(found), key=found.count) if found else b""
    out = [src]
    for k in range(1, copies):

        def fresh(m: re.Match[bytes], k: int = k) -> bytes:
            if m.group(0) == session:
                return session
            return str(uuid.uuid5(uuid.NAMESPACE_OID, f"{m.group(0).decode()}/{k}")).encode()

        copy = _UUID.sub(fresh, src)
        out.append(_IDS.sub(lambda m, k=k: m.group(1) + m.group(2) + b"K%d" % k, copy))
    return b"".join(out)


class _FoldFromStart:
    """The live tab's parser before the fold resumed (the "before" of ``--against-fold``):
    appended lines decoded once, the run folded and its trace made from every line."""

    def __init__(self) -> None:
        from loom_core.formats.claude_records import Lines

        self.lines = Lines()
        self.count = 0

    def add(self, block: bytes) -> None:
        from loom_core.formats.claude_records import parse_lines

        part = parse_lines(block, self.count + 1)
        self.count += block.count(b"\n")
        self.lines.records += part.records
        self.lines.bad += part.bad

    def document(self, path: str, tail: bytes) -> object:
        from loom_core.formats.claude_code import load_lines

        return load_lines(self.lines, path)


def cpu_ms(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.process_time()
    value = fn()
    return (time.process_time() - start) * 1000, value


def main() -> None:
    from loom_core.formats.claude_code import READER
    from loom_core.live.appended import AppendedReader
    from loom_core.views.timeline import TimelineBuilder

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--source", type=Path, default=None)
    parser.add_argument("--copies", type=int, default=13)
    parser.add_argument("--lines", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--against-fold",
        action="store_true",
        help="compare with the appended lines folded from the first line (before the fold "
        "resumed) instead of the whole re-read",
    )
    args = parser.parse_args()
    src = args.source or max(REAL.glob("*.jsonl"), key=lambda p: p.stat().st_size)
    data = long_session(src.read_bytes(), args.copies)
    lines = data.splitlines(keepends=True)
    head = b"".join(lines[: -args.lines])

    def index(doc: object) -> object:
        builder = TimelineBuilder(doc)  # type: ignore[arg-type]
        builder.extend(final=True, unfinished=False)
        return builder

    whole, offset, whole_ix, offset_ix = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session.jsonl"
        path.write_bytes(head)
        follower = AppendedReader(str(path), READER)
        follower.read()
        before = AppendedReader(str(path), dataclasses.replace(READER, lines=_FoldFromStart))
        if args.against_fold:
            before.read()
        for line in lines[-args.lines :]:
            with open(path, "ab") as fh:
                fh.write(line)
            if args.against_fold:
                ms, doc = cpu_ms(before.read)
            else:
                ms, doc = cpu_ms(lambda: READER.load(path.read_bytes(), str(path)))
            whole.append(ms)
            whole_ix.append(ms + cpu_ms(lambda doc=doc: index(doc))[0])
            ms, doc2 = cpu_ms(follower.read)
            offset.append(ms)
            offset_ix.append(ms + cpu_ms(lambda doc=doc2: index(doc))[0])
    med = statistics.median
    ratio = med(offset_ix) / med(whole_ix)
    out = {
        "source": src.name,
        "before": "appended, folded from the first line" if args.against_fold else "whole re-read",
        "mb": round(len(data) / 1e6, 1),
        "lines_appended": args.lines,
        "steps": len(doc2.effects),  # type: ignore[attr-defined]
        "whole_reread_cpu_ms": round(med(whole), 1),
        "offset_read_cpu_ms": round(med(offset), 1),
        "read_ratio": round(med(offset) / med(whole), 3),
        "whole_reread_and_index_cpu_ms": round(med(whole_ix), 1),
        "offset_read_and_index_cpu_ms": round(med(offset_ix), 1),
        "ratio": round(ratio, 3),
        "goal": f"ratio <= {GOAL_RATIO}",
        "met": "met" if ratio <= GOAL_RATIO else "not met",
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))


if __name__ == "__main__":
    main()
