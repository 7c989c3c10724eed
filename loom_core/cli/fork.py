"""``python -m loom_core fork TRACE --step N ...``: fork a run at a model step and re-run it.

Bad input (an unreadable trace, a step that is not a model step, an edit that does
not apply, a provider without its API key) exits 2 with one line on stderr and
writes nothing. A branch is always written once the re-run started, whatever its
outcome; the exit code says how it ended (see the command's help).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from loom_core.cli.help import print_error
from loom_core.errors import LoadError
from loom_core.providers.names import PROVIDERS, guess_provider

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_CANCELLED = 0, 1, 2, 130

EPILOG = """\
exit codes (model mode): 0 the branch was written and is done, paused on a tool call the parent
never made (status needs_tool_result, resumable with a supplied result) or stopped by
--max-turns / --budget-tokens (the status is printed); 1 the provider failed (the
branch keeps every step recorded before the failure); 2 bad input, nothing written;
130 interrupted (the branch so far is written as cancelled).
agent mode: 0 the branch was written; 1 no complete branch (no model call, cancelled or
timed out); 2 bad input."""


class BadInput(Exception):
    """A problem with what the user asked for: exit 2, one line."""


def make(name: str, model: str | None, base_url: str | None) -> Any:
    """The provider object; an unknown name or bad option is bad input."""
    from loom_core.providers import make_provider
    from loom_core.providers.base import ProviderError

    try:
        return make_provider(name, model or "", base_url)
    except (ValueError, KeyError, ProviderError) as err:
        raise BadInput(f"provider {name}: {err}") from err


def _edit(args: argparse.Namespace) -> Any:
    from loom_core.fork.edits import Edit

    return Edit(
        system=args.system,
        inject=args.inject,
        redact=list(args.redact or []),
        model=args.model,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        reason=args.reason or "",
    )


def _print_plan(plan: Any, trace: str) -> None:
    from loom_core.views.pricing import OFFLINE_TEXT, format_usd

    cost = (
        OFFLINE_TEXT
        if plan.offline
        else "unknown (unpriced model " + repr(plan.model) + ")"
        if plan.cost_usd is None
        else format_usd(plan.cost_usd) or "$0"
    )
    where = "the recorded request" if plan.source == "request" else "reconstructed from the log"
    print(f"dry run: fork {trace} at step {plan.step} (turn {plan.turn}); edit: {plan.edit}")
    print(f"  replays free: {plan.replayed} step(s)")
    print(
        f"  runs live: ~{plan.live_calls} model call(s) (max {plan.max_turns}), "
        f"~{plan.total_tokens:,} tokens ({plan.input_tokens:,} in / {plan.output_tokens:,} out), "
        f"cost {cost}"
    )
    print(f"  context at the fork step: ~{plan.context_tokens:,} tokens ({where})")
    if plan.provider is not None:
        state = "available" if plan.available else f"NOT available: {plan.unavailable_reason}"
        print(f"  provider: {plan.provider} ({state})")


def _print_result(result: Any) -> None:
    print(
        f"wrote {result.path}: status {result.status}; {result.live_calls} live model call(s), "
        f"{result.reused} recorded result(s) reused, "
        f"{result.input_tokens + result.output_tokens:,} tokens"
    )
    if result.pending_call:
        call = result.pending_call
        print(
            f"  waiting for a result of {call['name']}({json.dumps(call['input'])}) "
            f"[call {call['id']}]: the parent never made this call"
        )
    if result.error:
        print(f"  provider error: {result.error}")
    if result.output:
        print(f"  output: {' '.join(result.output.split())[:200]}")


def default_branch(trace: str, step: int, suffix: str = ".loom.json") -> Path:
    """``<runs folder>/<trace stem>.fork<step>[-n].loom.json``: a new name in the per-user
    runs folder, never beside the parent (which may be read-only, bundled or someone else's)."""
    from loom_core.runs_dir import free_path, runs_dir, stem_of

    folder = runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return free_path(folder, f"{stem_of(trace)}.fork{step}", suffix)


def _agent_mode(args: argparse.Namespace) -> int:
    """``--mode agent``: re-run the recorded agent itself (``loom_core.fork.agent_cli``)."""
    from loom_core.fork.agent_cli import run_agent_mode

    return int(run_agent_mode(args))


def cmd_fork(args: argparse.Namespace) -> int:
    if args.mode == "agent":
        return _agent_mode(args)
    from loom_core.fork.plan import dry_run
    from loom_core.fork.point import apply_edit, fork_context
    from loom_core.fork.rerun import run_fork
    from loom_core.formats.loader import load
    from loom_core.runs_dir import refuse_overwrite

    if args.output and not args.dry_run:
        refuse_overwrite(args.output, args.force)
    doc = load(args.trace)
    try:
        if args.max_turns < 1:
            raise BadInput("--max-turns must be at least 1")
        edit = _edit(args)
        ctx = fork_context(doc, args.trace, args.step)
        apply_edit(ctx, edit)  # a bad fork point or edit is reported before any provider check
        name = args.provider or guess_provider(ctx)
        provider = make(name, args.model or "", args.base_url)
        if args.dry_run:
            plan = dry_run(doc, args.trace, args.step, edit, args.max_turns, provider)
            if args.json:
                print(json.dumps(plan.to_dict()))
            else:
                _print_plan(plan, args.trace)
            return EXIT_OK
        ok, why = provider.available()
        if not ok:
            raise BadInput(f"provider {name} is not usable: {why}")
        args.output = args.output or str(default_branch(args.trace, args.step))
        try:
            result = run_fork(
                doc,
                args.trace,
                args.step,
                edit,
                provider,
                out=args.output,
                max_turns=args.max_turns,
                budget_tokens=args.budget_tokens,
                reason=args.reason or "",
            )
        finally:
            getattr(provider, "close", lambda: None)()  # SDK providers pool connections
    except (BadInput, ValueError) as err:
        print_error(str(err))
        return EXIT_BAD_INPUT
    except OSError as err:
        raise LoadError(args.output or args.trace, f"cannot write: {err.strerror or err}") from err
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        _print_result(result)
    return {"error": EXIT_ERROR, "cancelled": EXIT_CANCELLED}.get(result.status, EXIT_OK)


def add_fork_command(sub: Any) -> None:
    p = sub.add_parser(
        "fork",
        help="fork a run at a model step and re-run the tail on a model",
        description="Fork TRACE at model step N (its seq, as the steps and "
        "summary commands number it): edit the context there, then re-run the "
        "model turn by turn. Tool calls the parent also made are answered from "
        "its recording; a new call pauses the branch.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace")
    p.add_argument("--step", type=int, required=True, help="seq of the model step to fork at")
    p.add_argument("--system", help="replace the system prompt")
    p.add_argument("--inject", help="append a user note to the context at the fork step")
    p.add_argument(
        "--redact",
        type=int,
        action="append",
        metavar="SEQ",
        help="replace the tool result of step SEQ (repeatable)",
    )
    p.add_argument("--model", help="model id to run (default: the parent's)")
    p.add_argument("--temperature", type=float, help="sampling temperature from the fork step on")
    p.add_argument("--max-tokens", type=int, help="output token limit per model call")
    p.add_argument(
        "--provider", choices=PROVIDERS, help="default: the parent's dialect / model family"
    )
    p.add_argument("--base-url", help="API base URL (any OpenAI-compatible server for openai)")
    p.add_argument("--max-turns", type=int, default=20, help="live model calls at most (20)")
    p.add_argument("--budget-tokens", type=int, help="stop once the live calls used this many")
    p.add_argument("--reason", help="why this fork (recorded in the branch)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="estimate what replays free and what runs live; call nothing",
    )
    p.add_argument(
        "-o",
        "--output",
        help="where to write the branch trace (default: a new "
        "file in the per-user runs folder, see the README)",
    )
    p.add_argument("--force", action="store_true", help="replace OUTPUT if it exists")
    p.add_argument("--json", action="store_true", help="print the plan / result as one JSON object")
    p.add_argument(
        "--mode",
        choices=("model", "agent"),
        default="model",
        help="model: re-run the model here (default); agent: re-run the recorded "
        "agent command against a proxy in fork mode (traces from record -- COMMAND)",
    )
    agent = p.add_argument_group("agent mode")
    agent.add_argument(
        "--target", help="the model API for the live part (default: the parent's recorded target)"
    )
    agent.add_argument("--timeout", type=float, help="stop the agent after this many seconds")
    p.set_defaults(func=cmd_fork)
