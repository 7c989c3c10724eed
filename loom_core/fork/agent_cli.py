"""The ``fork --mode agent`` face of :func:`~loom_core.fork.agent_rerun.agent_rerun`.

Why two functions rather than a command: the ``fork`` command (``loom_core.cli.fork``)
owns the parser and its model mode; it calls :func:`add_agent_mode_args` on its
parser and :func:`run_agent_mode` for ``--mode agent``. Flags the fork command
already defines (``--step``, ``-o``, ``--json`` ...) are left to it -- they mean the
same here. :func:`main` runs the mode on its own:
``python -m loom_core.fork.agent_cli TRACE --step N [--inject TEXT] ...``.

Exit codes (those of ``fork``): 0 the branch was written; 1 no complete branch (the
agent made no model call, or timed out); 130 cancelled (Ctrl-C); 2 bad input, with
one line on stderr. The agent's own output goes to stderr, the ``--json`` result to stdout.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom_core.cli.help import HelpParser, print_error
from loom_core.errors import LoadError
from loom_core.fork.agent_rerun import (
    DEFAULT_TIMEOUT,
    AgentRerunError,
    AgentRerunResult,
    agent_rerun,
)
from loom_core.fork.edits import Edit
from loom_core.providers.base import CancelToken
from loom_core.runs_dir import free_path, refuse_overwrite, runs_dir, stem_of

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_CANCELLED = 0, 1, 2, 130


def add_agent_mode_args(parser: argparse.ArgumentParser) -> None:
    """Add the agent mode's flags that ``parser`` does not define yet (and a ``trace``
    positional when it has none)."""
    have = set(parser._option_string_actions)  # argparse keeps no public index of them

    def add(*names: str, **kw: Any) -> None:
        if not have.intersection(names):
            parser.add_argument(*names, **kw)

    if not any(not a.option_strings for a in parser._actions):
        parser.add_argument("trace", help="the parent trace (recorded with record -- COMMAND)")
    add("--step", type=int, metavar="SEQ", help="the model step to fork at (its seq)")
    add("--system", metavar="TEXT", help="replace the system prompt from the fork step on")
    add("--inject", metavar="TEXT", help="a note merged into the last user turn at the fork step")
    add("--model", metavar="NAME", help="the model to use from the fork step on")
    add(
        "--redact",
        type=int,
        action="append",
        default=[],
        metavar="SEQ",
        help="replace the result of tool step SEQ (repeatable)",
    )
    add("--temperature", type=float, metavar="T", help="sampling temperature from the fork step on")
    add("--max-tokens", type=int, metavar="N", help="output token limit from the fork step on")
    add("--reason", default="", metavar="TEXT", help="why this fork (kept in the provenance)")
    add(
        "--target",
        metavar="URL",
        help="the model API for the live part (default: the parent's recorded target)",
    )
    add(
        "-o",
        "--output",
        metavar="PATH",
        help="the branch (default: <stem>.fork<SEQ>.agent.loom.json in the per-user runs folder)",
    )
    add("--force", action="store_true", help="replace the -o file if it exists")
    add(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="stop the agent after this long (default %(default)g)",
    )
    add("--json", action="store_true", help="print the result as one JSON object")


def default_output(parent: str | Path, step: int) -> Path:
    """A new ``<stem>.fork<step>.agent.loom.json`` in the per-user runs folder."""
    folder = runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return free_path(folder, f"{stem_of(parent)}.fork{step}", ".agent.loom.json")


def _edit(args: argparse.Namespace) -> Edit:
    return Edit(
        system=getattr(args, "system", None),
        inject=getattr(args, "inject", None),
        model=getattr(args, "model", None),
        redact=list(getattr(args, "redact", None) or []),
        temperature=getattr(args, "temperature", None),
        max_tokens=getattr(args, "max_tokens", None),
        reason=getattr(args, "reason", "") or "",
    )


def _report(result: AgentRerunResult, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return
    where = result.path if result.path else "no branch written (no model call was recorded)"
    print(
        f"agent re-run: {result.served} model call(s) from the recording, {result.live} live "
        f"-> {where}",
        file=sys.stderr,
    )
    if result.diverged_early:
        print(
            "warning: the agent diverged before the fork step; those calls went live",
            file=sys.stderr,
        )
    if result.cancelled or result.timed_out:
        print(f"stopped: {'cancelled' if result.cancelled else 'timed out'}", file=sys.stderr)


def run_agent_mode(args: argparse.Namespace) -> int:
    """Run the agent mode for parsed ``args``; returns the exit code (see the module doc)."""
    parent = getattr(args, "trace", None) or getattr(args, "path", None)
    step = getattr(args, "step", None)
    if not parent or step is None:
        print("error: the agent re-run needs a trace and --step SEQ", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        if getattr(args, "output", None):
            refuse_overwrite(args.output, bool(getattr(args, "force", False)))
        out = getattr(args, "output", None) or default_output(parent, step)
    except (LoadError, OSError) as err:
        print_error(str(err))
        return EXIT_BAD_INPUT
    cancel = CancelToken()
    restore = _cancel_on_sigint(cancel)
    try:
        result = agent_rerun(
            parent,
            step,
            _edit(args),
            out,
            target=getattr(args, "target", None),
            timeout=getattr(args, "timeout", None) or DEFAULT_TIMEOUT,
            cancel=cancel,
            on_line=lambda line: print(line, file=sys.stderr),
        )
    except LoadError as err:
        print_error(f"{err.path}: {err.cause}")
        return EXIT_BAD_INPUT
    except AgentRerunError as err:
        print_error(str(err))
        return EXIT_BAD_INPUT
    finally:
        restore()
    _report(result, bool(getattr(args, "json", False)))
    if result.cancelled:
        return EXIT_CANCELLED
    return EXIT_OK if result.path and not result.timed_out else EXIT_ERROR


def _cancel_on_sigint(cancel: CancelToken) -> Any:
    """Ctrl-C stops the agent cleanly (its own process group does not get the key)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.cancel())
    return lambda: signal.signal(signal.SIGINT, previous)


def main(argv: Sequence[str] | None = None) -> int:
    parser = HelpParser(
        prog="python -m loom_core.fork.agent_cli",
        description="Re-run a recorded agent from a model step.",
    )
    add_agent_mode_args(parser)
    return run_agent_mode(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
