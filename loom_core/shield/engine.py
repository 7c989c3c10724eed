"""``Shield``: one session's rules, tripwires and held calls (loom-format.md §7.3-7.6).

Deciding a call is a generator so that waiting stays outside: it yields the
``PendingApproval`` of a confirm and resumes when the holder has waited
(decided, or out of time), then returns the ``Verdict``. ``screen`` drives it
synchronously, ``screen_async`` with an awaitable, and ``screening`` hands the
raw generator to any other driver. The shield itself does no I/O and never
sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from loom_core.shield.approvals import APPROVED, Approvals, PendingApproval
from loom_core.shield.config import ShieldConfig
from loom_core.shield.events import Decision, Verdict, confirm_event, deny_event
from loom_core.shield.match import call_matches
from loom_core.shield.screen import ScreenResult, screen_steps
from loom_core.shield.sequence import Tripwires

Steps = Generator[PendingApproval, None, Verdict]


class Shield:
    """Screens the tool calls of one proxy session.

    ``clock`` and ``new_id`` are injectable so tests need no sleeps and get
    stable ids; ``on_change`` is subscribed to ``approvals`` (see there). Use
    it from one thread (the proxy's event loop); only ``approvals`` is safe to
    touch from others.
    """

    def __init__(
        self,
        config: ShieldConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] | None = None,
        on_change: Callable[[PendingApproval, str], None] | None = None,
    ) -> None:
        self.config = config or ShieldConfig()
        self.clock = clock
        self.tripwires = Tripwires.parse(list(self.config.sequence))
        self.session_allow: list[str] = []  # "always allow" patterns added by operators
        self.approvals = Approvals(
            timeout=self.config.confirm_timeout,
            approvers=self.config.require_approver,
            break_glass=self.config.break_glass,
            clock=clock,
            new_id=new_id,
            edit_check=self._edit_problem,
            on_change=self._on_approval,
        )
        if on_change is not None:  # e.g. the proxy's event stream of pending/decided calls
            self.approvals.subscribe(on_change)

    # -- rules ----------------------------------------------------------------------

    def classify(self, name: str, tool_input: Any) -> tuple[str, str]:
        """Static rules only: deny, then allow (session allows last), then confirm.

        Returns ``(action, pattern)``; ``(default, "")`` when nothing matched.
        """
        groups = (
            (self.config.deny, "deny"),
            ((*self.config.allow, *self.session_allow), "allow"),
            (self.config.confirm, "confirm"),
        )
        for patterns, action in groups:
            for pattern in patterns:
                if call_matches(pattern, name, tool_input):
                    return action, pattern
        return self.config.default, ""

    def decide(self, name: str, tool_input: Any) -> Decision:
        """The rules' answer for one call, without side effects (§7.3 steps 1-2, 4)."""
        gate = self.tripwires.gate(name, tool_input)
        if gate is not None:
            action, label, evidence = gate
            return Decision(action, "sequence", label, label, evidence)
        action, rule = self.classify(name, tool_input)
        via = "rule" if rule else "default"
        label = rule or ("(shield default: confirm)" if action == "confirm" else "")
        return Decision(action, via, rule, label)

    def observe_request(self, request: Any) -> list[dict[str, Any]]:
        """Arm taint rules from the tool results in an incoming request (before forwarding)."""
        return self.tripwires.observe_request(request, self.clock())

    def note_allowed(self, name: str, tool_input: Any) -> None:
        """A call was let through: arm the ``after`` rules it matches."""
        self.tripwires.note_allowed(name, tool_input)

    def allow_for_session(self, pattern: str) -> None:
        """Add an allow rule for the rest of the session (after the configured ones)."""
        if pattern not in self.session_allow:
            self.session_allow.append(pattern)

    def _edit_problem(self, name: str, tool_input: Any) -> str | None:
        decision = self.decide(name, tool_input)
        if decision.action == "deny":
            return f"the edited call would be denied ({decision.via} {decision.rule!r})"
        return None

    def _on_approval(self, approval: PendingApproval, change: str) -> None:
        if change == "decided" and approval.state == APPROVED and approval.always_allow:
            self.allow_for_session(approval.always_allow)

    # -- one call -------------------------------------------------------------------

    def screen_call(self, name: str, tool_input: Any) -> Steps:
        """Decide one call; yields its approval if it must be held. See module docstring.

        An allowed call (rule, default or operator) arms ``after`` rules with
        the input that will actually run.
        """
        ts = self.clock()
        decision = self.decide(name, tool_input)
        if decision.action == "allow":
            verdict = Verdict(name, tool_input, True, decision, None, "", tool_input)
        elif decision.action == "deny":
            verdict = Verdict(
                name,
                tool_input,
                False,
                decision,
                deny_event(ts, name, tool_input, decision),
                decision.via,
                tool_input,
            )
        else:
            approval = self.approvals.create(name, tool_input, decision.label)
            try:
                yield approval
            except BaseException:  # closed early (client gone): nobody needs to answer
                self.approvals.cancel(approval.id)
                if self.approvals.get(approval.id) is not None:
                    self.approvals.settle(approval.id)
                raise
            approval = self.approvals.settle(approval.id)
            event = confirm_event(ts, decision, approval)
            runs = approval.edited_input if approval.approved and approval.edited else tool_input
            verdict = Verdict(
                name,
                tool_input,
                approval.approved,
                decision,
                event,
                event["via"],
                runs,
                approval.reason,
                approval.id,
            )
        if verdict.allowed:
            self.note_allowed(name, verdict.executed_input)
        return verdict

    # -- responses ------------------------------------------------------------------

    def screening(self, response: dict[str, Any]) -> Generator[PendingApproval, None, ScreenResult]:
        """The raw screening generator: yields each held call's approval in order."""
        return screen_steps(response, self.screen_call)

    def screen(
        self, response: dict[str, Any], wait: Callable[[PendingApproval], None] | None = None
    ) -> ScreenResult:
        """Screen synchronously. ``wait(approval)`` returns once the approval is
        decided or its time is up (it may decide it itself, as tests do); with
        no ``wait`` every held call times out at once.
        """
        steps = self.screening(response)
        try:
            approval = next(steps)
            while True:
                if wait is not None:
                    wait(approval)
                approval = steps.send(None)
        except StopIteration as stop:
            result: ScreenResult = stop.value  # what the screening generator returned
            return result
        finally:
            steps.close()

    async def screen_async(
        self, response: dict[str, Any], wait: Callable[[PendingApproval], Awaitable[None]]
    ) -> ScreenResult:
        """Screen from an event loop; ``wait`` is awaited for each held call.

        Cancelling the task cancels the pending approval (see ``screen_call``).
        """
        steps = self.screening(response)
        try:
            approval = next(steps)
            while True:
                await wait(approval)
                approval = steps.send(None)
        except StopIteration as stop:
            result: ScreenResult = stop.value  # what the screening generator returned
            return result
        finally:
            steps.close()
