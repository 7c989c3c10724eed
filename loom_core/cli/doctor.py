"""``python -m loom_core doctor TRACE [--json]``: the checkup on the command line.

The text output reads like ``loom doctor``'s (same first line, same
``  [sev] kind: message`` lines and quoted snippets) plus where each item
entered the run (and, for a duplicate, where the earlier one did), so scripts written for one work with the other. Exit 1 when
there are findings, 0 when none, 2 with one stderr line on bad input (the
shared CLI turns a LoadError into that).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loom_core.doctor.model import Checkup, Finding

EXIT_FINDINGS = 1


def where(f: Finding) -> str:
    """Where the item entered, by step seq; a user prompt is no step, so it is named so."""
    if f.step is None:
        return ""
    if f.effect is None and f.episode is not None:
        return f" in the user prompt before step {f.step}"
    return f" at step {f.step}"


def render(report: Checkup) -> str:
    """The human-readable report."""
    if report.ok:
        return f"context looks healthy ({report.total_tokens} tokens, no findings)"
    lines = [f"{len(report.findings)} finding(s) in {report.total_tokens} tokens of context:"]
    for f in report.findings:
        lines.append(f"  [{f.severity}] {f.kind}: {f.message}")
        earlier = f"; the earlier one{f.note}" if f.note else ""
        lines.append(f"      {f.quoted_snippet()}{where(f)}{earlier}")
    return "\n".join(lines)


def cmd_doctor(args: argparse.Namespace) -> int:
    from loom_core.doctor import checkup_path

    report = checkup_path(args.path)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        print(render(report))
    return EXIT_FINDINGS if report.findings else 0


def add_doctor_command(sub: Any) -> None:
    """Register ``doctor`` on the shared CLI's subparsers."""
    p = sub.add_parser(
        "doctor",
        help="check a run's context: oversized, unused, duplicate, "
        "stale, bloat, tool and error loops",
    )
    p.add_argument("path", help="a trace or journal")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    p.set_defaults(func=cmd_doctor)
