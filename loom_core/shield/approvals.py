"""Held tool calls waiting for a human: the sans-I/O approvals registry (§7.6, §7.7).

The registry only records state; it never blocks. Whoever holds a call (the
proxy) opens an approval, waits with its own machinery until the approval is
decided or ``remaining()`` runs out -- a listener registered with
``subscribe`` tells it when anything changes -- and then calls ``settle``,
which turns a still-pending approval into a timeout. Decisions follow
loom-harness's rules so ``loom approve`` behaves the same against our proxy;
a deny reason, edit-then-approve and "always allow" are our additions.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from loom_core.shield.match import call_matches, signature

PENDING, APPROVED, DENIED = "pending", "approved", "denied"
TIMEOUT, CANCELLED = "timeout", "cancelled"
Listener = Callable[["PendingApproval", str], None]
_log = logging.getLogger(__name__)


class ApprovalRejected(Exception):
    """A decision the registry refused. ``code``: unknown, decided, timed-out,
    not-permitted or bad-edit. loom-harness answers all of them with the same
    404, see ``http_error``."""

    def __init__(self, approval_id: str, code: str, message: str) -> None:
        self.id, self.code, self.message = approval_id, code, message
        super().__init__(message)

    @property
    def http_error(self) -> dict[str, str]:
        return {"error": f"no pending approval {self.id!r}"}


@dataclass
class PendingApproval:
    """One held call. ``input`` is what the model asked for; ``edited_input`` what runs."""

    id: str
    tool: str
    input: Any
    rule: str
    created: float
    deadline: float
    required: int = 1
    approvals: list[str] = field(default_factory=list)
    state: str = PENDING
    decided_by: str = ""
    break_glass: bool = False
    reason: str | None = None
    edited: bool = False
    edited_input: Any = None
    always_allow: str | None = None

    @property
    def done(self) -> bool:
        return self.state != PENDING

    @property
    def approved(self) -> bool:
        return self.state == APPROVED

    @property
    def via(self) -> str:
        """The event ``via`` for this outcome (loom-harness's vocabulary)."""
        if self.state in (TIMEOUT, CANCELLED, PENDING):
            return "timeout"
        return "break-glass" if self.break_glass else "operator"

    def remaining(self, now: float) -> float:
        """Seconds the holder should still wait (never negative)."""
        return max(0.0, self.deadline - now)

    def listing(self, now: float) -> dict[str, Any]:
        """One entry of ``GET /loom/shield/pending``, in loom-harness's shape."""
        out = {
            "id": self.id,
            "tool": self.tool,
            "input": self.input,
            "rule": self.rule,
            "age_s": round(now - self.created, 1),
        }
        if self.required > 1:
            out.update(approvals=list(self.approvals), required=self.required)
        return out

    def describe(self, now: float) -> dict[str, Any]:
        """Everything a GUI card or an event stream needs (our format, additive)."""
        out = self.listing(now)
        out.update(
            signature=signature(self.tool, self.input),
            state=self.state,
            approvals=list(self.approvals),
            required=self.required,
            timeout_s=round(self.remaining(now), 1),
        )
        out.update({"edited_input": self.edited_input} if self.edited else {})
        out.update({"via": self.via, "by": self.decided_by} if self.done else {})
        out.update({"reason": self.reason} if self.reason else {})
        return out


def _kind(value: Any) -> type | None:
    return next((k for k in (dict, list, str, bool, int, float) if isinstance(value, k)), None)


class Approvals:
    """The pending approvals of one shield session (thread-safe, never blocks)."""

    def __init__(
        self,
        *,
        timeout: float = 300.0,
        approvers: Mapping[str, Any] | None = None,
        break_glass: tuple[str, ...] | list[str] = (),
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] | None = None,
        edit_check: Callable[[str, Any], str | None] | None = None,
        on_change: Listener | None = None,
    ) -> None:
        self.timeout = timeout
        self.approvers = dict(approvers or {})  # pattern -> ApproverSpec (names, min)
        self.break_glass = tuple(break_glass)
        self._clock = clock
        self._new_id = new_id or (lambda: uuid.uuid4().hex[:6])
        self._edit_check = edit_check
        self._items: dict[str, PendingApproval] = {}
        self._listeners: list[Listener] = [on_change] if on_change else []
        self._lock = threading.Lock()

    # -- approver policy (loom-harness semantics) --------------------------------

    def _spec(self, tool: str, tool_input: Any) -> Any:
        """Of the matching approver specs, the one needing most approvals (the first such)."""
        best = None
        for pattern, spec in self.approvers.items():
            hit = (
                call_matches(pattern, tool, tool_input)
                if pattern.startswith("cap:")
                else fnmatchcase(tool, pattern) or fnmatchcase(signature(tool, tool_input), pattern)
            )
            if hit and (best is None or spec.min > best.min):
                best = spec
        return best

    def required_approvals(self, tool: str, tool_input: Any) -> int:
        spec = self._spec(tool, tool_input)
        return spec.min if spec else 1

    def approver_allowed(self, tool: str, tool_input: Any, who: str) -> bool:
        """Whether ``who`` may approve (denying needs no permission; break-glass names pass)."""
        if who in self.break_glass:
            return True
        spec = self._spec(tool, tool_input)
        return spec is None or who in spec.names

    # -- lifecycle ------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(approval, change)`` on every change; returns an unsubscribe.

        ``change`` is ``created``, ``updated`` (a partial approval in a chain),
        ``decided`` (approved, denied, timed out or cancelled) or ``removed``
        (settled by its holder). Listeners run on the deciding thread, after
        the registry's lock is released.
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, approval: PendingApproval, change: str) -> None:
        for listener in list(self._listeners):
            try:
                listener(approval, change)
            except Exception:  # a broken listener must not undo a decision
                _log.exception("shield approval listener failed")

    def create(self, tool: str, tool_input: Any, rule: str) -> PendingApproval:
        """Hold a call: a new pending approval with a fresh 6-hex id."""
        now = self._clock()
        with self._lock:
            for _ in range(100):
                new_id = self._new_id()
                if new_id not in self._items:
                    break
            else:
                raise RuntimeError("could not find a free approval id")
            approval = PendingApproval(
                new_id,
                tool,
                tool_input,
                rule,
                created=now,
                deadline=now + self.timeout,
                required=self.required_approvals(tool, tool_input),
            )
            self._items[new_id] = approval
        self._emit(approval, "created")
        return approval

    def get(self, approval_id: str) -> PendingApproval | None:
        return self._items.get(approval_id)

    def decide(
        self,
        approval_id: str,
        decision: str,
        by: str | None = None,
        reason: str | None = None,
        edited_input: Any = None,
        always_allow: str | None = None,
    ) -> str:
        """Record one operator decision; returns ``"decided"`` or ``"recorded"`` (chain
        not yet complete). Raises ``ApprovalRejected``.

        ``decision`` other than ``"approve"`` is a deny, as over HTTP. A deny
        from anyone decides (``reason`` is kept); an approve needs a permitted
        identity; a break-glass identity approves alone; otherwise identities
        accumulate until ``required``. ``edited_input`` (approve only) replaces
        the call's arguments -- an edit restarts a chain's count, since earlier
        approvers saw other arguments. ``always_allow`` (approve only) is a
        pattern the shield allows for the rest of the session.
        """
        who = by or ""
        with self._lock:
            change = self._decide_locked(
                approval_id, decision == "approve", who, reason, edited_input, always_allow
            )
            approval = self._items[approval_id]
        self._emit(approval, change)
        if change == "decided" and approval.state == TIMEOUT:
            raise ApprovalRejected(approval_id, "timed-out", f"approval {approval_id} timed out")
        return "decided" if change == "decided" else "recorded"

    def _decide_locked(
        self,
        approval_id: str,
        approve: bool,
        who: str,
        reason: str | None,
        edited_input: Any,
        always_allow: str | None,
    ) -> str:
        p = self._items.get(approval_id)
        if p is None:
            raise ApprovalRejected(approval_id, "unknown", f"no pending approval {approval_id!r}")
        if p.done:
            raise ApprovalRejected(
                approval_id, "decided", f"approval {approval_id} is already {p.state}"
            )
        if self._clock() >= p.deadline:
            p.state = TIMEOUT
            return "decided"
        if not approve:
            p.state, p.decided_by, p.reason = DENIED, who, (reason or None)
            return "decided"
        if not self.approver_allowed(p.tool, p.input, who):
            raise ApprovalRejected(
                approval_id,
                "not-permitted",
                f"{who or 'an anonymous operator'} may not approve {p.tool}",
            )
        if always_allow is not None and (
            not isinstance(always_allow, str) or not always_allow.strip()
        ):
            raise ApprovalRejected(approval_id, "bad-edit", "always_allow must be a pattern")
        if edited_input is not None:  # checked before anything changes
            self._check_edit(p, edited_input)
            if not (p.edited and p.edited_input == edited_input):
                p.approvals.clear()
            p.edited, p.edited_input = True, edited_input
        if always_allow is not None:
            p.always_allow = always_allow.strip()
        if who in self.break_glass:
            p.state, p.decided_by, p.break_glass = APPROVED, who, True
            return "decided"
        if who not in p.approvals:
            p.approvals.append(who)
        if len(p.approvals) >= p.required:
            p.state, p.decided_by = APPROVED, "+".join(p.approvals) if p.approvals else who
            return "decided"
        return "updated"

    def _check_edit(self, p: PendingApproval, edited: Any) -> None:
        if _kind(edited) is not _kind(p.input if p.input is not None else {}):
            raise ApprovalRejected(
                p.id,
                "bad-edit",
                f"edited input must be a {type(p.input).__name__} like the original",
            )
        try:
            json.dumps(edited, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ApprovalRejected(p.id, "bad-edit", f"edited input is not JSON: {e}") from None
        problem = self._edit_check(p.tool, edited) if self._edit_check else None
        if problem:
            raise ApprovalRejected(p.id, "bad-edit", problem)

    def _end(self, approval_id: str, state: str) -> bool:
        with self._lock:
            p = self._items.get(approval_id)
            if p is None or p.done:
                return False
            p.state = state
        self._emit(p, "decided")
        return True

    def expire(self, approval_id: str) -> bool:
        """Time one approval out now (False if unknown or already decided)."""
        return self._end(approval_id, TIMEOUT)

    def cancel(self, approval_id: str) -> bool:
        """The holder gave up (its client went away); nobody needs to decide any more."""
        return self._end(approval_id, CANCELLED)

    def expire_due(self) -> list[PendingApproval]:
        """Time out every approval past its deadline (a periodic sweep may call this)."""
        now = self._clock()
        due = [p for p in list(self._items.values()) if not p.done and now >= p.deadline]
        return [p for p in due if self.expire(p.id)]

    def settle(self, approval_id: str) -> PendingApproval:
        """The holder stopped waiting: a still-pending approval times out; then it is removed."""
        self.expire(approval_id)
        with self._lock:
            approval = self._items.pop(approval_id)
        self._emit(approval, "removed")
        return approval

    def pending(self) -> list[dict[str, Any]]:
        """``GET /loom/shield/pending``'s list (overdue approvals are expired first)."""
        self.expire_due()
        now = self._clock()
        return [p.listing(now) for p in list(self._items.values()) if not p.done]
