"""``ShieldConfig``: every shield setting, validated once at the boundary.

Built from ``loom proxy``-style flags (``from_flags`` / ``from_args``), it
resolves ``--profile``/``--policy`` and appends the command-line patterns
after the policy's, exactly in loom-harness's order -- order matters because
the first matching pattern names the rule in events. The proxy builds one at
start-up and hands it to ``Shield``; the GUI can build one to preview rules.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from loom_core.shield.policy import ApproverSpec, ShieldConfigError, resolve_policy
from loom_core.shield.profiles import profile_names
from loom_core.shield.sequence import parse_sequence_rule

Action = Literal["allow", "confirm", "deny"]


class ShieldConfig(BaseModel):
    """The resolved rules of one shield (loom-format.md §7.1-7.6)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    default: Action = "allow"
    allow: tuple[str, ...] = ()
    confirm: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    sequence: tuple[str, ...] = ()
    confirm_timeout: float = Field(default=300.0, ge=0)
    require_approver: dict[str, ApproverSpec] = Field(default_factory=dict)
    break_glass: tuple[str, ...] = ()
    # Where the rules came from, and what looked wrong but was tolerated.
    profile: str = ""
    policy: str = ""
    warnings: tuple[str, ...] = ()

    @field_validator("allow", "confirm", "deny", "break_glass")
    @classmethod
    def _non_empty(cls, items: tuple[str, ...]) -> tuple[str, ...]:
        for item in items:
            if not item.strip():
                raise ValueError("patterns and names must not be empty")
        return items

    @field_validator("sequence")
    @classmethod
    def _parses(cls, rules: tuple[str, ...]) -> tuple[str, ...]:
        for raw in rules:
            parse_sequence_rule(raw)
        return rules

    @field_validator("require_approver", mode="before")
    @classmethod
    def _specs(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): ApproverSpec.coerce(v) for k, v in value.items()}
        return value

    @classmethod
    def from_flags(
        cls,
        *,
        profile: str = "",
        policy: str | Path | None = None,
        deny: Iterable[str] = (),
        allow: Iterable[str] = (),
        confirm: Iterable[str] = (),
        rule: Iterable[str] = (),
        shield_default: str = "allow",
        confirm_timeout: float = 300.0,
        require_approver: Iterable[str] = (),
        break_glass: Iterable[str] = (),
        use_pyyaml: bool | None = None,
    ) -> ShieldConfig | None:
        """The shield ``loom proxy`` would build from these flags; ``None`` = no shield.

        As in loom-harness, only a profile, a policy, a pattern, a rule or a
        non-``allow`` default turns the shield on (then the control plane
        exists); ``--require-approver``/``--break-glass`` alone do not. Raises
        ``ShieldConfigError`` (``PolicyFileError`` for a bad file).
        """
        deny, allow, confirm, rule = list(deny), list(allow), list(confirm), list(rule)
        if shield_default not in ("allow", "confirm", "deny"):
            raise ShieldConfigError(
                f"--shield-default must be allow, confirm or deny, not {shield_default!r}"
            )
        if not (profile or policy or deny or allow or confirm or rule or shield_default != "allow"):
            return None
        doc, warnings = (
            resolve_policy(profile, policy, use_pyyaml) if (profile or policy) else ({}, [])
        )
        default: Any = doc.get("default") or "allow"  # a policy file's value: pydantic checks it
        if shield_default != "allow":  # an explicit flag beats the policy; "allow" cannot
            default = shield_default
        approvers = dict(doc.get("require_approver") or {})
        for spec in require_approver:
            pattern, _, names = spec.partition("=")
            if not names.strip() or not pattern.strip():
                raise ShieldConfigError(
                    f"--require-approver needs 'PATTERN=[N:]NAMES', got {spec!r}"
                )
            approvers[pattern.strip()] = ApproverSpec.coerce(names)
        try:
            return cls(
                default=default,
                deny=(*doc.get("deny", []), *deny),
                allow=(*doc.get("allow", []), *allow),
                confirm=(*doc.get("confirm", []), *confirm),
                sequence=(*doc.get("sequence", []), *rule),
                confirm_timeout=confirm_timeout,
                require_approver=approvers,
                break_glass=(*doc.get("break_glass", []), *break_glass),
                profile=profile,
                policy=str(policy or ""),
                warnings=(*warnings, *_approver_warnings(approvers)),
            )
        except ValidationError as e:
            raise ShieldConfigError(_first_error(e)) from None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ShieldConfig | None:
        """From a namespace parsed with ``add_shield_arguments``."""
        return cls.from_flags(
            profile=args.profile,
            policy=args.policy or None,
            deny=args.deny,
            allow=args.allow,
            confirm=args.confirm,
            rule=args.rule,
            shield_default=args.shield_default,
            confirm_timeout=args.confirm_timeout,
            require_approver=args.require_approver,
            break_glass=args.break_glass,
        )


def _approver_warnings(approvers: dict[str, ApproverSpec]) -> list[str]:
    return [
        f"require_approver {p!r} needs {s.min} approvals but names only {len(s.names)}: "
        "only a break-glass identity can approve it"
        for p, s in approvers.items()
        if len(s.names) < s.min
    ]


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    msg = str(err.get("msg"))
    msg = msg.removeprefix("Value error, ")  # pydantic's wrapper of our own ValueError text
    return f"shield setting {where}: {msg}" if where else msg


def add_shield_arguments(parser: argparse.ArgumentParser) -> None:
    """The shield flags of ``loom proxy`` (names, defaults, repeatability)."""
    parser.add_argument(
        "--profile",
        default="",
        metavar="NAME",
        help=f"built-in safety profile ({', '.join(profile_names())})",
    )
    parser.add_argument(
        "--policy",
        default="",
        metavar="FILE",
        help="policy file (YAML or JSON); flags below extend it",
    )
    for flag, what in (
        ("--deny", "block calls matching PATTERN"),
        ("--allow", "let calls matching PATTERN through without asking"),
        ("--confirm", "hold calls matching PATTERN for approval"),
    ):
        parser.add_argument(
            flag, action="append", default=[], metavar="PATTERN", help=what + " (repeatable)"
        )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="RULE",
        help="sequence rule: 'after <call>: deny <pattern>, ...' or "
        "'taint <text>: confirm <pattern>' (repeatable)",
    )
    parser.add_argument(
        "--shield-default",
        dest="shield_default",
        default="allow",
        choices=["allow", "confirm", "deny"],
        help="action when no rule matches (default: allow)",
    )
    parser.add_argument(
        "--confirm-timeout",
        dest="confirm_timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="deny a held call after this long (default 300)",
    )
    parser.add_argument(
        "--require-approver",
        dest="require_approver",
        action="append",
        default=[],
        metavar="PATTERN=[N:]NAMES",
        help="only NAMES may approve matching calls; N: needs N of them",
    )
    parser.add_argument(
        "--break-glass",
        dest="break_glass",
        action="append",
        default=[],
        metavar="NAME",
        help="an identity that may approve anything alone",
    )
