"""``--scrub``: redact secret-shaped strings in what the proxy stores (loom-format.md §6.7).

Applied at the persist boundary only: the client gets the real bytes, the journal,
sidecar and trace get ``[scrubbed:<kind>]`` in place of each secret (for an
assignment such as ``password=…`` only the value is replaced, so the reader still
sees what it was). Pattern-based on purpose: hashes and ids are left alone. A cheap
pre-filter keeps ordinary strings on a single regex search.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

# (kind, pattern); specific shapes before generic ones. A pattern with a group named
# "keep" keeps that prefix (the name of an assignment, the user of a URL).
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?"
            r"-----END [A-Z0-9 ]*PRIVATE KEY-----"
        ),
    ),
    ("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws-key-id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer", re.compile(r"(?P<keep>\b[Bb]earer\s+)[A-Za-z0-9._~+/=\-]{16,}")),
    ("url-password", re.compile(r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:)[^/\s@]+(?=@)")),
    (
        "credential-assignment",
        re.compile(
            r"(?i)(?P<keep>\b(?:[a-z0-9]+[_\-])*(?:password|passwd|pwd|secret|api[_\-]?key"
            r"|access[_\-]?key|secret[_\-]?key|auth[_\-]?token|access[_\-]?token|token)"
            r"[\"']?\s*[=:]\s*[\"']?)(?!\[scrubbed:)[^\s\"',;]{8,}"
        ),
    ),
]
_PREFILTER = re.compile(
    r"(?i)sk-|akia|asia|gh[pousr]_|github_pat_|eyj|bearer|private key|://"
    r"|passw|pwd|secret|api.?key|access.?key|token"
)


def scrub_text(text: str) -> str:
    """``text`` with every secret-shaped substring replaced by ``[scrubbed:<kind>]``."""
    if not _PREFILTER.search(text):
        return text
    for kind, pattern in _PATTERNS:
        text = pattern.sub(partial(_mark, f"[scrubbed:{kind}]"), text)
    return text


def _mark(label: str, match: re.Match[str]) -> str:
    """A secret's replacement: the part it keeps (a prefix such as ``Bearer ``), then ``label``."""
    return (match.groupdict().get("keep") or "") + label


def scrub_value(value: Any) -> Any:
    """A scrubbed copy of a JSON value (every string value; object keys are structure and
    stay); the input is never modified -- it may be the very object sent to the client."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {k: scrub_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v) for v in value]
    return value
