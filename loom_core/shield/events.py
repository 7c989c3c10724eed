"""``shield_events`` entries and the notice a model reads instead of a blocked call.

Shapes, key orders and wording are loom-harness's (loom-format.md §1.6,
§7.8): traces we record must read the same to ``loom`` and to anyone
grepping them, and the model must get the same instruction. Our additions
(``reason``, ``edited_input``, ``always_allow``) are appended last and only
when used, so a plain decision is byte-for-byte loom's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loom_core.shield.approvals import PendingApproval
from loom_core.shield.match import signature

NOTICE_TAIL = (
    "The call was not executed. Do not retry it; continue without it or explain "
    "to the user that the action was blocked by policy."
)


@dataclass(frozen=True)
class Decision:
    """What the rules say about one call, before any human is asked.

    ``action``: allow, deny or confirm. ``via``: rule, default or sequence
    (what decided). ``rule``: the label events record -- the pattern, ``""``
    when nothing matched, or ``"<raw rule> (tripped by <evidence>)"``.
    ``label``: what the operator is shown for a confirm; it differs from
    ``rule`` only for a default confirm (``(shield default: confirm)``, while
    the event keeps ``""``, as loom-harness writes it). ``evidence``: what
    armed a sequence rule.
    """

    action: str
    via: str
    rule: str
    label: str
    evidence: str = ""

    @property
    def sequence(self) -> bool:
        return self.via == "sequence"


@dataclass(frozen=True)
class Verdict:
    """The outcome for one call: whether it runs, with which input, and its event."""

    tool: str
    input: Any
    allowed: bool
    decision: Decision
    event: dict[str, Any] | None = None
    via: str = ""
    executed_input: Any = None
    reason: str | None = None
    approval_id: str = ""

    @property
    def edited(self) -> bool:
        return self.event is not None and "edited_input" in self.event


def base_event(ts: float, tool: str, tool_input: Any, rule: str) -> dict[str, Any]:
    return {"ts": ts, "tool": tool, "input": tool_input, "rule": rule}


def deny_event(ts: float, tool: str, tool_input: Any, decision: Decision) -> dict[str, Any]:
    """A static, default or sequence deny: ``ts, tool, input, rule, action, via``."""
    return {
        **base_event(ts, tool, tool_input, decision.rule),
        "action": "deny",
        "via": decision.via,
    }


def taint_event(ts: float, raw_rule: str) -> dict[str, Any]:
    return {"ts": ts, "action": "tainted", "via": "sequence", "rule": raw_rule}


def confirm_event(ts: float, decision: Decision, approval: PendingApproval) -> dict[str, Any]:
    """A settled confirm: ``ts, tool, input, rule, id, action, via[, by]`` + our extras.

    An operator's answer to a tripped sequence confirm is ``sequence-operator``.
    """
    via = approval.via
    if decision.sequence and via == "operator":
        via = "sequence-operator"
    event = {
        **base_event(ts, approval.tool, approval.input, decision.rule),
        "id": approval.id,
        "action": "approve" if approval.approved else "deny",
        "via": via,
    }
    if approval.decided_by and via != "timeout":
        event["by"] = approval.decided_by
    if approval.reason and not approval.approved:
        event["reason"] = approval.reason
    if approval.approved and approval.edited:
        event["edited_input"] = approval.edited_input
    if approval.approved and approval.always_allow:
        event["always_allow"] = approval.always_allow
    return event


def deny_reason(via: str, rule: str, reason: str | None = None) -> str:
    """The ``<reason>`` part of a notice, per ``via``; an operator's reason is quoted."""
    if via == "rule":
        return f"matched deny rule '{rule}'."
    if via == "sequence":
        return f"blocked by sequence rule '{rule}'."
    if via == "default":
        return "no rule matched and this shield denies by default."
    if via == "timeout":
        return "approval timed out."
    if reason:
        return f"denied by the operator (reason: {reason})."
    return "denied by the operator."


def notice(tool: str, tool_input: Any, reason: str) -> str:
    """The text that replaces a blocked call in the response."""
    sig = signature(tool, tool_input)
    return f"[loom shield] Blocked tool call {sig} -- {reason} {NOTICE_TAIL}"


def notice_for(verdict: Verdict) -> str:
    rule = verdict.event.get("rule", "") if verdict.event else verdict.decision.rule
    return notice(verdict.tool, verdict.input, deny_reason(verdict.via, rule, verdict.reason))
