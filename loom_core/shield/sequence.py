"""Sequence rules: tripwires over a session, not single calls (loom-format.md §7.4).

Some harm only shows in order: reading a credentials file is fine, so is a
web request, the second right after the first is not. ``after <call-glob>:
deny X, confirm Y`` arms when a matching call is allowed through; ``taint
<text-glob>: ...`` arms when a tool result in a later request contains
matching text. Once armed a rule stays armed for the session and its
consequences apply to every later call, ahead of any static allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loom_core.shield.events import taint_event
from loom_core.shield.match import call_matches, signature, text_matches

SEQUENCE_ACTIONS = ("deny", "confirm")


@dataclass
class SequenceRule:
    """One parsed rule and its per-session state (``armed`` and the evidence why)."""

    kind: str  # "after" | "taint"
    trigger: str
    consequences: list[tuple[str, str]]  # (action, call pattern)
    raw: str
    armed: bool = False
    evidence: str = ""

    def label(self) -> str:
        """The rule label events and approvals carry once the rule has tripped."""
        return f"{self.raw} (tripped by {self.evidence})"


def _consequences(tail: str) -> list[tuple[str, str]]:
    out = []
    for part in tail.split(","):
        action, _, pattern = part.strip().partition(" ")
        if action not in SEQUENCE_ACTIONS or not pattern.strip():
            raise ValueError(
                f"each consequence is 'deny <glob>' or 'confirm <glob>'; "
                f"{part.strip()!r} is neither"
            )
        out.append((action, pattern.strip()))
    return out


def parse_sequence_rule(raw: str) -> SequenceRule:
    """Parse ``after Read(*.env*): deny WebFetch*, confirm Bash*`` (or ``taint ...``).

    loom-harness splits at the first ``:``, which makes any trigger containing
    a colon (``after cap:secret: ...``, ``after Bash(*https://*): ...``)
    unparseable. We take the first colon whose remainder is a valid
    consequence list: identical for every rule loom-harness accepts, and the
    colon-bearing triggers work too. Anything else raises ``ValueError``.
    """
    first_error: ValueError | None = None
    start = 0
    while (colon := raw.find(":", start)) != -1:
        start = colon + 1
        head, tail = raw[:colon].strip(), raw[colon + 1 :]
        kind, _, trigger = head.partition(" ")
        if kind not in ("after", "taint"):
            if first_error is None:
                first_error = ValueError(
                    f"a sequence rule begins 'after <call glob>:' or 'taint <text glob>:' "
                    f"({raw!r} does not)"
                )
            continue
        if not trigger.strip():
            first_error = first_error or ValueError(
                f"a sequence rule reads '<trigger>: <consequences>'; {raw!r} does not"
            )
            continue
        try:
            consequences = _consequences(tail)
        except ValueError as e:
            first_error = first_error or e
            continue
        return SequenceRule(kind, trigger.strip(), consequences, raw)
    if first_error is None:
        if raw.strip().startswith(("after ", "taint ")):
            first_error = ValueError(
                f"a sequence rule reads '<trigger>: <consequences>'; {raw!r} does not"
            )
        else:
            first_error = ValueError(
                f"a sequence rule begins 'after <call glob>:' or 'taint <text glob>:' "
                f"({raw!r} does not)"
            )
    raise first_error


def tool_result_texts(request: Any) -> list[str]:
    """Every tool-result text of a request body, Anthropic or OpenAI chat shaped.

    Anthropic: a ``tool_result`` block's string content, or the ``text`` of
    its text blocks. OpenAI chat: a ``role: "tool"`` message's string content.
    """
    texts: list[str] = []
    messages = request.get("messages") if isinstance(request, dict) else None
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if message.get("role") == "tool" and isinstance(content, str):
            texts.append(content)
        if not isinstance(content, list):
            continue
        for block in content:
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                continue
            inner = block.get("content")
            if isinstance(inner, str):
                texts.append(inner)
            elif isinstance(inner, list):
                texts.extend(
                    b.get("text", "")
                    for b in inner
                    if isinstance(b, dict) and b.get("type") == "text"
                )
    return texts


@dataclass
class Tripwires:
    """The session's sequence rules and what has armed them."""

    rules: list[SequenceRule] = field(default_factory=list)

    @classmethod
    def parse(cls, raws: list[str]) -> Tripwires:
        return cls([parse_sequence_rule(r) for r in raws])

    def gate(self, name: str, tool_input: Any) -> tuple[str, str, str] | None:
        """``(action, label, evidence)`` of the armed consequence that applies, if any.

        A deny anywhere among the armed rules beats a confirm; among confirms
        the first one found labels the approval.
        """
        confirm: tuple[str, str, str] | None = None
        for rule in [r for r in self.rules if r.armed]:
            for action, pattern in rule.consequences:
                if not call_matches(pattern, name, tool_input):
                    continue
                if action == "deny":
                    return "deny", rule.label(), rule.evidence
                confirm = confirm or ("confirm", rule.label(), rule.evidence)
        return confirm

    def note_allowed(self, name: str, tool_input: Any) -> None:
        """An allowed call arms every ``after`` rule it matches (once)."""
        for rule in self.rules:
            if (
                rule.kind == "after"
                and not rule.armed
                and call_matches(rule.trigger, name, tool_input)
            ):
                rule.armed = True
                rule.evidence = signature(name, tool_input)[:200]

    def observe_request(self, request: Any, ts: float) -> list[dict[str, Any]]:
        """Arm ``taint`` rules from the request's tool results; one event per rule armed."""
        watching = [r for r in self.rules if r.kind == "taint" and not r.armed]
        if not watching:
            return []
        texts = tool_result_texts(request)
        events = []
        for rule in watching:
            if any(text_matches(text, rule.trigger) for text in texts):
                rule.armed = True
                rule.evidence = f"a tool result matching {rule.trigger!r}"
                events.append(taint_event(ts, rule.raw))
        return events
