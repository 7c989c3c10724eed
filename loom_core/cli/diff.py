"""``python -m loom_core diff A B [--json]``: compare two runs from the command line.

Output follows ``loom diff``'s shape (identical prefix, first divergence, totals
per status) with what our aligned diff adds: the differing pair's words and
arguments, and token and cost deltas. Exit 0 when the runs are identical, 1 when
they differ, 2 (one line on stderr, from the CLI's LoadError handler) on bad input.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from loom_core.views.pricing import format_usd
from loom_core.views.steps import call_text, clip, effect_seq

if TYPE_CHECKING:  # the engine loads only when a diff runs (every CLI command parses this)
    from loom_core.diff import Change, PairDetail, RunDiff, SideTotals

EXIT_SAME, EXIT_DIFFERENT = 0, 1


def add_diff_command(sub: Any) -> None:
    """Register ``diff`` on the CLI's subparsers."""
    p = sub.add_parser("diff", help="compare two runs: aligned steps, first divergence, deltas")
    p.add_argument("a", help="trace, journal or wirelog")
    p.add_argument("b", help="trace, journal or wirelog")
    p.add_argument("--json", action="store_true", help="one JSON report instead of text")
    p.set_defaults(func=cmd_diff)


def cmd_diff(args: argparse.Namespace) -> int:
    from loom_core.diff import compare, pair_detail
    from loom_core.formats.loader import load

    diff = compare(load(args.a), load(args.b))
    if args.json:
        report = diff.to_dict()
        first = diff.first_divergence
        report["first_divergence_detail"] = (
            pair_detail(diff, first.row).to_dict() if first is not None else None
        )
        print(json.dumps(report, ensure_ascii=False))
    else:
        print("\n".join(report_lines(diff)))
    return EXIT_SAME if diff.identical else EXIT_DIFFERENT


def _side_line(label: str, kind: str, text: str | None, args: Any) -> str:
    calls = (args or {}).get("tool_calls") if isinstance(args, dict) else None
    if calls and not (text or "").strip():
        shown = "calls " + ", ".join(
            call_text({"name": c["name"], "input": c["args"]}) for c in calls
        )
    else:
        shown = text or ""
    return f"    {label} {kind}: {clip(shown, 100)}"


def _change_line(c: Change) -> str:
    def show(v: Any) -> str:
        return clip(json.dumps(v, ensure_ascii=False), 60)

    if c.op == "added":
        return f"{c.path}: added {show(c.new)}"
    if c.op == "removed":
        return f"{c.path}: removed {show(c.old)}"
    return f"{c.path}: {show(c.old)} -> {show(c.new)}"


def _divergence_lines(diff: RunDiff, detail: PairDetail) -> list[str]:
    first = diff.first_divergence
    assert first is not None
    where = " · ".join(
        f"{side} step {seq}"
        for side, seq in (("a", first.a_seq), ("b", first.b_seq))
        if seq is not None
    )
    lines = ["first divergence:", f"  {where} [{first.status}]"]  # steps by seq, never rows
    r = detail.row
    if r.a is not None:
        lines.append(_side_line("a", diff.a.effects[r.a].kind or "", detail.a_text, detail.a_args))
    if r.b is not None:
        lines.append(_side_line("b", diff.b.effects[r.b].kind or "", detail.b_text, detail.b_args))
    lines.extend(_fork_point(diff, first.row))
    if r.a is not None and r.b is not None and detail.a_text != detail.b_text:
        from loom_core.diff import render

        lines.append(f"    words: {render(detail.text_diff)}")
    for label, changes in (("args", detail.args_diff), ("result", detail.result_diff)):
        if r.a is not None and r.b is not None and changes:
            more = f" (+{len(changes) - 3} more)" if len(changes) > 3 else ""
            lines.append(f"    {label}: " + "; ".join(map(_change_line, changes[:3])) + more)
    return lines


def _fork_point(diff: RunDiff, row: int) -> list[str]:
    """After an edit, the pair of model calls it changed (the fork point), when it follows."""
    from loom_core.diff import EDITED

    nxt = diff.rows[row + 1] if row + 1 < len(diff.rows) else None
    if nxt is None or nxt.status != EDITED:
        return []
    where = " · ".join(
        f"{side} step {effect_seq(doc.effects, i)}"
        for side, doc, i in (("a", diff.a, nxt.a), ("b", diff.b, nxt.b))
        if i is not None
    )
    return [f"  then {where} [{EDITED}]: the model call whose context was edited"]


def _cost(value: float | None) -> str:
    return "unknown (unpriced model)" if value is None else format_usd(value) or "$0"


def _tokens(t: SideTotals) -> str:
    return f"{t.input_tokens:,} in / {t.output_tokens:,} out"


def _formats(diff: RunDiff) -> str:
    fa, fb = diff.a.format, diff.b.format
    return fa if fa == fb else f"{fa} vs {fb}"


def report_lines(diff: RunDiff) -> list[str]:
    """The human report, one string per line."""
    from loom_core.diff import pair_detail

    totals = diff.totals
    if diff.identical:
        lines = [f"runs are identical ({len(diff.rows)} step(s))"]
    else:
        first = diff.first_divergence
        assert first is not None
        lines = [
            f"identical prefix: {diff.identical_prefix} step(s)",
            *_divergence_lines(diff, pair_detail(diff, first.row)),
            "totals: " + ", ".join(f"{n} {s}" for s, n in totals.statuses.items()),
        ]
    if diff.by_substance:
        lines.insert(0, f"compared by what each step did ({_formats(diff)}: ids and usage aside)")
    d = totals.delta
    lines.append(
        f"tokens: a {_tokens(totals.a)} · b {_tokens(totals.b)} · "
        f"delta {d.input_tokens:+,} in / {d.output_tokens:+,} out"
    )
    delta_cost = "unknown" if d.cost is None else format_usd(d.cost, signed=True) or "$0"
    lines.append(f"cost: a {_cost(totals.a.cost)} · b {_cost(totals.b.cost)} · delta {delta_cost}")
    return lines
