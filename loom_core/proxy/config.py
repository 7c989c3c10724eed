"""Proxy configuration: the flags of loom-harness's ``loom proxy`` (loom-format.md §6.1).

Why a dataclass and not the argparse namespace: the GUI, the ``record`` runner and
the tests build a proxy without a command line, and the shield engine consumes its
part (:class:`ShieldFlags`) without knowing about argparse.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from loom_core.proxy.evloop import CHOICES as LOOP_CHOICES

DEFAULT_TARGET = "https://api.anthropic.com"
DEFAULT_SAVE = "session.loom.json"
SHIELD_DEFAULTS = ("allow", "confirm", "deny")


@dataclass
class ShieldFlags:
    """The shield flags, exactly as given on the command line; the shield engine turns
    them into its one resolved :class:`loom_core.shield.config.ShieldConfig`. The proxy
    itself only reads :attr:`requested` (it must not depend on the engine: it fails
    closed when the engine is missing)."""

    deny: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    confirm: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)  # --rule: "after …: …" / "taint …: …"
    profiles: list[str] = field(default_factory=list)
    policies: list[str] = field(default_factory=list)  # --policy FILE (YAML or JSON)
    default: str | None = None  # --shield-default; None = not given (loom: allow)
    confirm_timeout: float = 300.0
    # Not proxy flags today (loom-harness's approver chains); kept so the engine reads
    # every field of the flags directly.
    require_approver: tuple[str, ...] = ()
    break_glass: tuple[str, ...] = ()

    @property
    def requested(self) -> bool:
        """True when any shield flag asks for screening."""
        return bool(
            self.deny
            or self.allow
            or self.confirm
            or self.rules
            or self.profiles
            or self.policies
            or self.default not in (None, "allow")
        )


@dataclass
class ProxyConfig:
    """Everything one proxy process needs; see :func:`add_proxy_flags` for meanings."""

    host: str = "127.0.0.1"
    port: int = 8788
    target: str = DEFAULT_TARGET
    save: str = DEFAULT_SAVE
    replay: str | None = None
    max_body_mb: float = 64.0  # 0 = no cap
    upstream_timeout: float = 600.0
    event_loop: str = "auto"  # :mod:`.evloop`: uvloop where installed, else asyncio's
    scrub: bool = False
    ready_file: str | None = None
    save_interval: float = 2.0  # seconds between background trace writes
    freeze_gc: bool = False  # gc.freeze() after saves: only in a process that is just a proxy
    shield: ShieldFlags = field(default_factory=ShieldFlags)
    fork_from: str | None = None  # fork mode (:mod:`.forkmode`): the parent trace
    fork_at: int = 0  # the fork exchange (the fork model step's index among model calls)
    fork_edit: dict[str, Any] | None = None  # an Edit as a dict (``Edit.to_dict()``)
    force: bool = False  # --force: a new session may replace an existing --save trace
    otlp_endpoint: str | None = None  # --otlp-endpoint: GenAI spans to this collector
    otlp_content: bool = False  # --otlp-content: message content in those spans
    publish: bool = False  # --publish: the trace to the team library's run store at stop

    @property
    def max_body(self) -> int:
        """The request-body cap in bytes (0 = none)."""
        return int(self.max_body_mb * 1024 * 1024)


@dataclass(frozen=True)
class SessionPaths:
    """The files of one recording, all derived from ``--save`` so a restart finds them.

    ``journal``: the §5 journal the desktop tails; ``exchanges``: the exchange sidecar
    (requests as deltas + responses, :mod:`.sidecar`); ``recovered``: where a crashed
    previous session is compacted to (loom-harness's name, §6.6).
    """

    save: Path
    base: str

    @classmethod
    def of(cls, save: str | Path) -> SessionPaths:
        path = Path(save)
        name = str(path)
        base = name[: -len(".loom.json")] if name.endswith(".loom.json") else name
        return cls(path, base)

    @property
    def journal(self) -> Path:
        return Path(self.base + ".journal.jsonl")

    @property
    def exchanges(self) -> Path:
        return Path(self.base + ".exchanges.jsonl")

    @property
    def recovered(self) -> Path:
        suffix = ".recovered.loom.json" if str(self.save).endswith(".loom.json") else ".recovered"
        return Path(self.base + suffix)


def port_number(text: str) -> int:
    """An argparse type: a TCP port (0-65535); anything else is a usage error, not a crash."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0-65535, not {value}")
    return value


def otlp_url(text: str) -> str:
    """An argparse type: an http(s) URL with a host (the collector); else a usage error."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"not an http(s) URL: {text!r}")
    return text


def add_proxy_flags(p: argparse.ArgumentParser, record: bool = False) -> None:
    """The flags shared by ``proxy`` and ``record`` (``record`` has no ``--replay``)."""
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument(
        "--port",
        type=port_number,
        default=0 if record else 8788,
        help="port to listen on; 0 = pick a free one (printed at startup)",
    )
    p.add_argument(
        "--target",
        default=DEFAULT_TARGET,
        help="upstream base URL without /v1; the request path is appended verbatim",
    )
    p.add_argument(
        "--save",
        default=DEFAULT_SAVE,
        help="trace to write (default %(default)s); an existing one is refused unless --force",
    )
    p.add_argument("--force", action="store_true", help="replace an existing --save trace")
    if not record:
        p.add_argument(
            "--replay",
            metavar="FILE",
            help="serve FILE's recorded responses in order; no upstream calls",
        )
    p.add_argument(
        "--max-body-mb",
        type=float,
        default=64.0,
        help="refuse larger request bodies with 413 (0 = no cap)",
    )
    p.add_argument(
        "--upstream-timeout",
        type=float,
        default=600.0,
        help="seconds to wait for the upstream to connect / send the next bytes",
    )
    p.add_argument(
        "--event-loop",
        choices=LOOP_CHOICES,
        default="auto",
        help="event loop: uvloop where installed (auto, the default) or the standard asyncio loop",
    )
    p.add_argument(
        "--scrub",
        action="store_true",
        help="redact secret-shaped strings in what is stored (the client gets real values)",
    )
    p.add_argument(
        "--ready-file",
        metavar="PATH",
        help="write {port, pid, journal, save, ...} as JSON once listening",
    )
    p.add_argument("--save-interval", type=float, default=2.0, help=argparse.SUPPRESS)
    g = p.add_argument_group("OpenTelemetry (send every exchange to a team's backend)")
    g.add_argument(
        "--otlp-endpoint",
        type=otlp_url,
        metavar="URL",
        help="also emit each exchange as OpenTelemetry GenAI spans over OTLP/HTTP to URL "
        "(a collector's base URL, e.g. http://127.0.0.1:4318; /v1/traces is added); "
        "batched and retried off the request path, never slowing the client",
    )
    g.add_argument(
        "--otlp-content",
        action="store_true",
        help="include message content (prompts, replies, tool arguments and results) in "
        "the spans; off by default, as in OpenTelemetry",
    )
    p.add_argument(
        "--publish",
        action="store_true",
        help="when the proxy stops, publish its trace to the run library's run store "
        "(LOOM_LIBRARY_URL's library; see runs store)",
    )
    if not record:
        _add_fork_flags(p)
    g = p.add_argument_group("shield (screening of tool calls; consumed by loom_core.shield)")
    g.add_argument("--deny", action="append", default=[], metavar="PATTERN")
    g.add_argument("--allow", action="append", default=[], metavar="PATTERN")
    g.add_argument("--confirm", action="append", default=[], metavar="PATTERN")
    g.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="RULE",
        help="sequence rule: 'after GLOB: deny GLOB, ...' or 'taint GLOB: ...'",
    )
    g.add_argument("--profile", action="append", default=[], metavar="NAME")
    g.add_argument("--policy", action="append", default=[], metavar="FILE")
    g.add_argument("--shield-default", choices=SHIELD_DEFAULTS, default=None)
    g.add_argument(
        "--confirm-timeout",
        type=float,
        default=300.0,
        help="seconds a held call waits for a decision before it is denied",
    )


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"not JSON ({err})") from err
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def _add_fork_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("fork mode (re-run an agent from a step of a recording)")
    g.add_argument(
        "--fork-from",
        metavar="TRACE",
        help="serve TRACE's model calls before the fork point from the recording "
        "(matched by request content), forward the rest live, edited",
    )
    g.add_argument(
        "--fork-at",
        type=int,
        default=0,
        metavar="N",
        help="the fork model call: its index among TRACE's model calls",
    )
    g.add_argument(
        "--fork-edit",
        type=_json_object,
        metavar="JSON",
        help='the edit, e.g. \'{"inject": "...", "system": "...", "model": "..."}\'',
    )


def config_from_args(args: argparse.Namespace) -> ProxyConfig:
    """Build the config from parsed flags (see :func:`add_proxy_flags`)."""
    shield = ShieldFlags(
        deny=list(args.deny),
        allow=list(args.allow),
        confirm=list(args.confirm),
        rules=list(args.rule),
        profiles=list(args.profile),
        policies=list(args.policy),
        default=args.shield_default,
        confirm_timeout=args.confirm_timeout,
    )
    return ProxyConfig(
        host=args.host,
        port=args.port,
        target=args.target.rstrip("/"),
        save=args.save,
        replay=getattr(args, "replay", None),
        max_body_mb=args.max_body_mb,
        upstream_timeout=args.upstream_timeout,
        event_loop=args.event_loop,
        scrub=args.scrub,
        ready_file=args.ready_file,
        save_interval=args.save_interval,
        freeze_gc=True,
        shield=shield,
        fork_from=getattr(args, "fork_from", None),
        fork_at=getattr(args, "fork_at", 0),
        fork_edit=getattr(args, "fork_edit", None),
        force=args.force,
        otlp_endpoint=args.otlp_endpoint,
        otlp_content=args.otlp_content,
        publish=getattr(args, "publish", False),
    )
