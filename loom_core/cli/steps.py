"""``python -m loom_core steps RUN [--json]``: the step list, one line per row, as the app shows it.

Every line comes from :func:`loom_core.views.steps.step_row`, the function the desktop
step list draws its cells from, so a script sees the same numbers, summaries,
flags and shield decisions a user sees. A step is numbered by its ``seq`` (what
``loom timeline`` prints in brackets); a user prompt row has no number. Bad input
exits 2 with one stderr line (the shared CLI's LoadError handler).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from loom_core.cli.sample_option import add_sample_option
from loom_core.views.shield_place import edited_input
from loom_core.views.steps import StepRow, decision_mark, flag_marks, step_rows


def _decision(event: Any) -> str:
    """An edited call is named by the arguments that ran, marked (as the context view does)."""
    edited, ran = edited_input(event)
    args = json.dumps(ran if edited else event.input, ensure_ascii=False, default=str)
    what = f"{event.tool}({args}){' ✎ edited' if edited else ''}" if event.tool else "(no call)"
    return f"{decision_mark(event.action)} {event.action} {what} via {event.via}"


def row_line(row: StepRow) -> str:
    """``[seq] kind agent tokens cost  marks summary  ★ decisions`` (◆ a denial; seq blank on
    a prompt)."""
    number = "" if row.seq is None else str(row.seq)
    kind = "  " * row.depth + row.kind
    tokens = f"{row.tokens:,} tok" if row.tokens else ""
    decisions = "".join("  " + _decision(e) for _i, e in row.shield)
    return (
        f"[{number:>4}] {kind:<18} {row.agent:<10} {tokens:>10} {row.cost_text:>9}  "
        f"{flag_marks(row.flags)}{row.summary}{decisions}"
    )


def proxy_journal(doc: Any, path: str) -> Any:
    """A proxy's journal as its live tab shows it: labelled a proxy recording, with the shield
    decisions of its exchange sidecar (``<base>.exchanges.jsonl``; journal lines have no room
    for them). Any other document is returned as it is."""
    suffix = ".journal.jsonl"
    side = Path(path[: -len(suffix)] + ".exchanges.jsonl") if path.endswith(suffix) else None
    if doc.format != "journal" or side is None or not side.is_file():
        return doc
    from loom_core.formats.header import Wrong, coerce
    from loom_core.formats.structs import ShieldEvent
    from loom_core.proxy.sidecar import read_sidecar

    try:
        exchanges = read_sidecar(side).exchanges
    except OSError:
        return doc  # unreadable: the journal alone, as a tab without its sidecar shows it
    events = []
    for raw in (e for x in exchanges for e in x.shield_events):
        try:
            events.append(coerce(ShieldEvent, raw))
        except Wrong:
            continue  # readers skip what does not parse, as the live tab's sidecar reader does
    doc.header.recorded_via = "proxy"
    doc.header.shield_events = events
    return doc


def cmd_steps(args: argparse.Namespace) -> int:
    from loom_core.cli.sample_option import load_run
    from loom_core.views.timeline import build_timeline

    tl = build_timeline(proxy_journal(load_run(args.path, args.sample), args.path))
    for row in step_rows(tl):
        print(json.dumps(row.to_dict(), ensure_ascii=False) if args.json else row_line(row))
    return 0


def add_steps_command(sub: Any) -> None:
    """Register ``steps`` on the shared CLI's subparsers."""
    p = sub.add_parser("steps", help="list a run's steps as the app does (numbered by seq)")
    p.add_argument("path", help="a trace, journal or wirelog")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    add_sample_option(p)
    p.set_defaults(func=cmd_steps)
