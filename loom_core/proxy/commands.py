"""The ``proxy`` and ``record`` subcommands of ``python -m loom_core``.

Kept apart from :mod:`loom_core.cli.entry` so that the readers' CLI does not import
aiohttp: the implementations are imported only when a proxy command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from loom_core.proxy.config import add_proxy_flags, config_from_args


def cmd_proxy(args: argparse.Namespace) -> int:
    from loom_core.proxy.runner import main

    return main(config_from_args(args))


def cmd_record(args: argparse.Namespace) -> int:
    from loom_core.proxy.record import main

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        args.parser.error("record needs a command after --")
    return main(config_from_args(args), command)


def add_proxy_commands(sub: Any) -> None:
    """Register ``proxy`` and ``record`` on the main parser's subparsers."""
    p = sub.add_parser(
        "proxy",
        help="recording (or replaying) proxy in front of a model API",
        description="Forward model API calls to --target and record every "
        "completed exchange as a loom trace.",
    )
    add_proxy_flags(p)
    p.set_defaults(func=cmd_proxy)
    p = sub.add_parser(
        "record",
        help="run a command with its model API calls recorded",
        usage="python -m loom_core record [flags] -- COMMAND...",
    )
    add_proxy_flags(p, record=True)
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    p.set_defaults(func=cmd_record, parser=p)
