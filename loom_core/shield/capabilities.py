"""Capability inference for ``cap:`` rules (loom-format.md §7.2).

``deny cap:exec`` should stop a shell tool whatever the agent calls it, so a
call is described by what it can *do*. The set is inferred exactly as
loom-harness infers it (a policy must block the same calls in both tools):
risk categories matched by name or signature globs, plus hints on the
lower-cased name, plus two derived rules. Declared capabilities do not exist
at the wire, so none are consulted.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from loom_core.formats.canonical import call_signature as signature

VOCABULARY = frozenset(
    {
        "read",
        "write",
        "exec",
        "network",
        "secret",
        "destructive",
        "idempotent",
        "pii_access",
        "database_write",
        "browser_submit",
        "user_communication",
        "money_movement",
        "external_side_effect",
    }
)

# (category, name globs, signature globs, capabilities), in loom's severity order.
# Name globs meet the tool name as given; signature globs the raw signature.
RISK_CATEGORIES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], frozenset[str]], ...] = (
    (
        "money-movement",
        (
            "refund*",
            "*_refund",
            "issue_refund*",
            "*payout*",
            "create_charge*",
            "charge_card*",
            "capture_payment*",
            "*create_payment*",
            "transfer_funds*",
            "*wire_transfer*",
            "process_payment*",
        ),
        ("*(*create_refund*)", "*(*capture_payment*)"),
        frozenset({"money_movement"}),
    ),
    (
        "secret-read",
        ("*secret*", "*credential*"),
        (
            "*(*.env*)",
            "*(*/.ssh/*)",
            "*(*/.aws/*)",
            "*(*secret*)",
            "*(*credential*)",
            "*(*/.netrc*)",
            "*(*id_rsa*)",
            "*(*.pem*)",
        ),
        frozenset({"read", "secret"}),
    ),
    (
        "pii-access",
        (
            "get_customer*",
            "*customer_record*",
            "*patient*",
            "get_profile*",
            "*personal_data*",
            "*get_pii*",
            "lookup_user*",
            "*ssn*",
            "*passport*",
        ),
        ("*(*social_security*)", "*(*date_of_birth*)", "*(*ssn*)"),
        frozenset({"pii_access", "read"}),
    ),
    (
        "network-egress",
        ("WebFetch*", "*fetch*", "*http*request*", "*upload*"),
        (
            "*(*curl *)",
            "*(*wget *)",
            "*(*http://*)",
            "*(*https://*)",
            "*(*nc -*)",
            "*(*scp *)",
            "*(*rsync *)",
        ),
        frozenset({"network"}),
    ),
    (
        "user-comm",
        (
            "send_email*",
            "*send_message*",
            "send_sms*",
            "reply_to*",
            "notify_customer*",
            "notify_user*",
            "post_message*",
            "*send_notification*",
            "email_customer*",
        ),
        (),
        frozenset({"user_communication", "network"}),
    ),
    (
        "code-exec",
        ("Bash*", "Shell*", "Exec*", "*run_shell*", "*run_command*", "*execute*"),
        ("*(*| sh*)", "*(*| bash*)", "*(*eval *)", "*(*python -c*)"),
        frozenset({"exec"}),
    ),
    (
        "db-write",
        (
            "sql_insert*",
            "sql_update*",
            "db_insert*",
            "db_update*",
            "insert_row*",
            "update_record*",
            "upsert*",
        ),
        (
            "*(*INSERT INTO*)",
            "*(*insert into*)",
            "*(*UPDATE *SET*)",
            "*(*update *set*)",
            "*(*UPSERT*)",
        ),
        frozenset({"database_write", "write"}),
    ),
    (
        "browser-submit",
        ("click*", "*_click", "submit*", "press_button*", "*form_submit*"),
        (),
        frozenset({"browser_submit"}),
    ),
    (
        "fs-destructive",
        ("Delete*", "*remove*", "*rmtree*"),
        (
            "*(*rm -rf*)",
            "*(*rm -f*)",
            "*(* rm *)",
            "*(*mkfs*)",
            "*(*> /*)",
            "*(*truncate*)",
            "*(*git push --force*)",
            "*(*git reset --hard*)",
            "*(*DROP *)",
            "*(*DELETE FROM*)",
        ),
        frozenset({"write", "destructive"}),
    ),
    (
        "fs-write",
        ("Write*", "Edit*", "*write_file*", "*create_file*", "*patch*"),
        ("*(*>> *)", "*(*tee *)"),
        frozenset({"write"}),
    ),
)

# Hints on the lower-cased tool name: capability -> globs.
NAME_HINTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "read",
        (
            "read*",
            "get_*",
            "*_get",
            "glob*",
            "grep*",
            "ls",
            "list_*",
            "*_list",
            "cat",
            "search*",
            "find_*",
            "view*",
            "*_fetch",
            "fetch_*",
            "*status*",
            "head",
            "tail",
            "stat",
        ),
    ),
    (
        "write",
        (
            "write*",
            "edit*",
            "create_*",
            "*_create",
            "update_*",
            "*_update",
            "*patch*",
            "append_*",
            "*_append",
            "put_*",
        ),
    ),
    (
        "exec",
        (
            "sh",
            "bash*",
            "zsh",
            "shell*",
            "*shell*",
            "run",
            "run_*",
            "*_run",
            "exec*",
            "*_exec*",
            "*command*",
            "terminal*",
            "*execute*",
            "python*",
            "node*",
        ),
    ),
    (
        "network",
        (
            "*http*",
            "*_url",
            "url_*",
            "*download*",
            "curl*",
            "wget*",
            "*request*",
            "api_*",
            "*_api",
            "fetch*",
            "*webhook*",
            "*email*",
            "*slack*",
            "send*",
            "send_*",
            "*_send",
            "sendmail*",
            "post_*",
            "upload*",
            "*upload*",
            "publish*",
            "*publish",
            "notify*",
            "*notify",
            "transmit*",
            "deliver*",
            "dispatch*",
            "*sms*",
            "tweet*",
            "submit*",
            "push_*",
            "mail_*",
            "*_mail",
        ),
    ),
)

# These four always reach outside the machine, so they imply external_side_effect.
_EXTERNAL = frozenset({"money_movement", "user_communication", "browser_submit", "database_write"})


def risk_categories(name: str, tool_input: Any) -> list[str]:
    """Every risk category the call falls in, most severe first.

    A falsy input is read as ``{}`` here (and only here): loom-harness does
    so, and ``Read([])`` must get the same capabilities from both tools.
    """
    sig = signature(name, tool_input or {})
    return [
        category
        for category, names, sigs, _caps in RISK_CATEGORIES
        if any(fnmatchcase(name, g) for g in names) or any(fnmatchcase(sig, g) for g in sigs)
    ]


def infer_capabilities(name: str, tool_input: Any = None) -> set[str]:
    """The capability set of one call (the union of categories and name hints)."""
    caps: set[str] = set()
    by_category = {c[0]: c[3] for c in RISK_CATEGORIES}
    for category in risk_categories(name, tool_input):
        caps |= by_category[category]
    lowered = name.lower()
    for capability, globs in NAME_HINTS:
        if any(fnmatchcase(lowered, g) for g in globs):
            caps.add(capability)
    if caps & _EXTERNAL:
        caps.add("external_side_effect")
    # Exactly {read} means idempotent; an empty set means "unknown", never "harmless".
    if caps == {"read"}:
        caps.add("idempotent")
    return caps
