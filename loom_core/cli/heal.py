"""``python -m loom_core heal TRACE (--forbid S | --require S | --regex R | --check M:F)``.

Exit codes: 0 healed (the winner's path is printed) or the run already passes;
1 no repair passed (a result, not an error: every candidate is listed); 2 bad
input (unreadable trace, broken check, unusable provider) with one stderr line;
130 interrupted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from loom_core.cli.fork import BadInput, make
from loom_core.cli.help import print_error
from loom_core.providers.names import PROVIDERS, guess_provider

EXIT_OK, EXIT_NO_WINNER, EXIT_BAD_INPUT, EXIT_CANCELLED = 0, 1, 2, 130


def _check(args: argparse.Namespace) -> Any:
    from loom_core.heal.checks import CheckError, build_check

    try:
        return build_check(
            args.forbid or [], args.require or [], args.regex or [], args.check or []
        )
    except CheckError as err:
        raise BadInput(str(err)) from err


def _provider_factory(args: argparse.Namespace, doc: Any, trace: str) -> Any:
    """A factory (one provider per concurrent candidate), checked for a key up front."""
    if args.mode == "agent":
        return None
    from loom_core.fork.point import fork_context

    first = next((e.seq for e in doc.effects if e.kind == "model" and not e.depth), None)
    if first is None:
        raise BadInput(f"{trace}: the run has no top-level model step to fork at")
    from loom_core.providers import checked_factory

    name = args.provider or guess_provider(fork_context(doc, trace, first))
    return checked_factory(lambda: make(name, args.model, args.base_url), name)


def _out_dir(args: argparse.Namespace) -> str:
    """``--out-dir`` (refused when it holds files, unless ``--force``), else a new
    ``<stem>.heal`` folder in the per-user runs folder."""
    from loom_core.runs_dir import free_dir, runs_dir, stem_of

    if args.out_dir:
        folder = Path(args.out_dir)
        if not args.force and folder.is_dir() and any(folder.iterdir()):
            raise BadInput(
                f"{folder}: the folder already holds files; nothing was written "
                "(pass --force to write the candidates there anyway)"
            )
        return str(folder)
    return str(free_dir(runs_dir(), stem_of(args.trace) + ".heal"))


def _print(result: Any, trace: str) -> None:
    if result.status == "already_passes":
        print(f"{trace} already passes ({result.check}); nothing to heal")
        return
    for c in result.candidates:
        extra = f"  diverged at step {c.diverged_at}" if c.diverged_at is not None else ""
        why = f"  ({c.error})" if c.error and c.status != "passed" else ""
        print(
            f"  {c.status:<9} {c.label:<28} fork at step {c.step:<5} {c.tokens:>8,} tokens"
            f"{extra}{why}"
        )
    if result.winner is not None:
        print(f"healed by {result.winner.label}: {result.winner.path}")
        if result.regression:
            print(f"regression trace: {result.regression}")
    elif result.status == "no_repairs":
        print(f"no repair to try: the checkup found nothing to redact in {trace}")
    else:
        print(f"no repair passed ({result.check}); {result.tokens:,} tokens spent")


def cmd_heal(args: argparse.Namespace) -> int:
    from loom_core.doctor import checkup
    from loom_core.formats.loader import load
    from loom_core.heal.engine import Healer, HealOptions

    doc = load(args.trace)
    try:
        check = _check(args)
        factory = _provider_factory(args, doc, args.trace)
        out_dir = _out_dir(args)
        options = HealOptions(
            args.max_turns,
            args.max_candidates,
            args.budget_tokens,
            args.concurrency,
            args.mode,
            args.save_regression,
        )
        healer = Healer(doc, args.trace, check, factory, out_dir, options)
        result = healer.run(checkup(doc).findings)
    except (BadInput, ValueError) as err:
        print_error(str(err))
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        _print(result, args.trace)
    if result.status == "cancelled":
        return EXIT_CANCELLED
    return EXIT_OK if result.status in ("healed", "already_passes") else EXIT_NO_WINNER


def add_heal_command(sub: Any) -> None:
    p = sub.add_parser(
        "heal",
        help="try redacting suspect context (checkup findings) as forks "
        "until the output passes a check",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace")
    p.add_argument("--forbid", action="append", metavar="TEXT", help="output must not contain TEXT")
    p.add_argument("--require", action="append", metavar="TEXT", help="output must contain TEXT")
    p.add_argument("--regex", action="append", metavar="RE", help="output must match RE")
    p.add_argument(
        "--check",
        action="append",
        metavar="MODULE:FUNCTION",
        help="FUNCTION(output) must return true (MODULE importable from here)",
    )
    p.add_argument(
        "--mode",
        choices=("model", "agent"),
        default="model",
        help="model re-run (default) or re-run the recorded agent command",
    )
    p.add_argument("--provider", choices=PROVIDERS, help="default: the run's dialect / model")
    p.add_argument("--base-url", help="API base URL (any OpenAI-compatible server for openai)")
    p.add_argument("--model", help="model id (default: the run's)")
    p.add_argument("--max-candidates", type=int, default=5, help="repairs to try at most (5)")
    p.add_argument(
        "--budget-tokens",
        type=int,
        help="tokens all candidates may bill together, never exceeded: each call "
        "first reserves the most it could bill",
    )
    p.add_argument("--max-turns", type=int, default=20, help="live model calls per branch (20)")
    p.add_argument("--concurrency", type=int, default=1, help="candidates run at once (model mode)")
    p.add_argument(
        "--out-dir",
        help="where candidate branches go (default: a new <TRACE "
        "stem>.heal folder in the per-user runs folder, see the README)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write candidates into an --out-dir that already holds files",
    )
    p.add_argument(
        "--save-regression",
        metavar="DIR",
        help="also save the winner as healed-<hash>.loom.json in DIR (never "
        "replacing a file: -2, -3… when the name is taken)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=cmd_heal)
