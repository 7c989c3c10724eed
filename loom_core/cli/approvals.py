"""``approvals`` and ``approve``: drive a proxy's held tool calls from a terminal (§7.7).

Works against our proxy and loom-harness's alike, through :class:`ControlClient`
(which reads the control token from ``<runtime dir>/<port>.token``). Without
``--port`` the commands find the proxy the way the desktop's Attach… does: by the live
token files in the runtime dir (:mod:`loom_core.proxy.running_proxies`); with none or several running
they say so and ask for ``--port`` (loom's fixed default, 8788, is a port the app never
uses: it picks a free one). Output follows ``loom approvals``/``loom approve``, except
that a deny prints ``denied [<id>]``. Exit codes: 0 done, 1 the proxy answered with an
HTTP error, 2 no proxy answered (or none to choose).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
from typing import TYPE_CHECKING, Any

from loom_core.cli.help import print_error

if TYPE_CHECKING:  # pydantic and urllib load only when a command talks to a proxy
    from loom_core.proxy.control_client import ControlError


def _port(args: argparse.Namespace) -> int | None:
    """``--port``, else the one running proxy's; None (reported) when there is not one."""
    if args.port is not None:
        return int(args.port)
    from loom_core.proxy.running_proxies import only_running_port

    try:
        return only_running_port()
    except LookupError as err:
        print_error(str(err))
        return None


def _fail(err: ControlError) -> int:
    print_error(str(err))
    return 2 if err.status == 0 else 1


def cmd_approvals(args: argparse.Namespace) -> int:
    from loom_core.proxy.control_client import ControlClient, ControlError

    port = _port(args)
    if port is None:
        return 2
    try:
        pending = ControlClient(port).pending()
    except ControlError as err:
        return _fail(err)
    if not pending:
        print("no pending approvals")
        return 0
    for p in pending:
        line = (
            f"[{p.id}] {p.tool}({json.dumps(p.input, sort_keys=True, default=str)})"
            f"  rule={p.rule!r}  waiting {p.age_s}s"
        )
        if p.required and p.required > 1:
            line += f"  approvals {len(p.approvals or [])}/{p.required}"
        print(line)
    return 0


def _approver() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry for this uid
        return ""


def cmd_approve(args: argparse.Namespace) -> int:
    from loom_core.proxy.control_client import ControlClient, ControlError

    port = _port(args)
    if port is None:
        return 2
    by = args.by or os.environ.get("LOOM_APPROVER") or _approver()
    try:
        ControlClient(port).decide(args.id, not args.deny, by=by or None, reason=args.reason)
    except ControlError as err:
        return _fail(err)
    print(f"{'denied' if args.deny else 'approved'} [{args.id}]")
    return 0


def add_approval_commands(sub: Any) -> None:
    """Register ``approvals`` and ``approve`` on the main parser's subparsers."""
    from loom_core.proxy.config import port_number

    p = sub.add_parser("approvals", help="list the tool calls a shielded proxy holds")
    p.add_argument(
        "--port",
        type=port_number,
        default=None,
        help="the proxy's port (default: the one running proxy with a shield)",
    )
    p.set_defaults(func=cmd_approvals)
    p = sub.add_parser("approve", help="approve (or --deny) a held tool call")
    p.add_argument("id", help="the pending approval's id, as `approvals` lists it")
    p.add_argument("--deny", action="store_true", help="deny instead of approving")
    p.add_argument("--reason", default=None, help="why (denies: quoted to the agent)")
    p.add_argument(
        "--as",
        dest="by",
        default=None,
        metavar="NAME",
        help="approver identity (default: $LOOM_APPROVER, else the OS user)",
    )
    p.add_argument(
        "--port",
        type=port_number,
        default=None,
        help="the proxy's port (default: the one running proxy with a shield)",
    )
    p.set_defaults(func=cmd_approve)
