"""The approvals registry: loom-harness's decision rules plus our reason/edit/always-allow.

Why: `loom approve` and our GUI must get the same answers from our proxy as
from loom's (multi-approver chains, outsiders, break-glass, double decides),
and waiting must be testable without sleeping -- the clock is injected.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from loom.shield import PendingApproval as LoomPending
from loom.shield import Shield as LoomShield

from loom_core.shield import ApprovalRejected, Approvals, ApproverSpec, Shield, ShieldConfig

BASH = ("Bash", {"command": "make deploy"})
REFUND = ("refund_order", {"order_id": "o-1"})


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


APPROVERS = {
    "cap:money_movement": {"names": ["cfo", "ceo", "cto"], "min": 2},
    "refund*": {"names": ["cfo"], "min": 1},
    "Bash*": ["ops"],
}


def registry(clock: Clock) -> Approvals:
    return Approvals(
        timeout=60,
        clock=clock,
        break_glass=("root",),
        approvers={p: ApproverSpec.coerce(s) for p, s in APPROVERS.items()},
    )


SCRIPTS = [
    (REFUND, [("approve", "eve"), ("approve", "cfo"), ("approve", "cfo"), ("approve", "ceo")]),
    (REFUND, [("approve", "cfo"), ("deny", "eve"), ("approve", "ceo")]),
    (REFUND, [("approve", "root")]),
    (REFUND, [("deny", "root")]),
    (BASH, [("approve", ""), ("approve", "ops"), ("approve", "ops")]),
    (("Read", {}), [("approve", ""), ("deny", "")]),
    (("Read", {}), [("maybe", "x")]),
]


@pytest.mark.parametrize(("call", "script"), SCRIPTS)
def test_decisions_follow_loom(call: tuple[str, Any], script: list[tuple[str, str]]) -> None:
    theirs = LoomShield(approvers=APPROVERS, break_glass=["root"])
    ours = registry(Clock())
    approval = ours.create(*call, rule="r")
    p = LoomPending(approval.id, *call, rule="r", required=theirs.required_approvals(*call))
    theirs.pending[p.id] = p
    assert approval.required == p.required
    for decision, who in script:
        accepted = theirs.decide_pending(p.id, decision == "approve", who=who)
        try:
            ours.decide(approval.id, decision, by=who or None)
        except ApprovalRejected:
            assert not accepted, (decision, who)
        else:
            assert accepted, (decision, who)
        assert approval.approvals == p.approvals
        assert (approval.done, approval.decided_by, approval.break_glass) == (
            p.event.is_set(),
            p.decided_by,
            p.break_glass,
        )
        assert approval.approved == (p.decision == "approve")


def test_listing_shape_and_ids() -> None:
    clock = Clock()
    reg = registry(clock)
    a, b = reg.create(*REFUND, rule="cap:money_movement"), reg.create(*BASH, rule="Bash*")
    assert re.fullmatch(r"[0-9a-f]{6}", a.id) and a.id != b.id
    clock.now += 12.34
    assert reg.pending() == [
        {
            "id": a.id,
            "tool": "refund_order",
            "input": {"order_id": "o-1"},
            "rule": "cap:money_movement",
            "age_s": 12.3,
            "approvals": [],
            "required": 2,
        },
        {"id": b.id, "tool": "Bash", "input": BASH[1], "rule": "Bash*", "age_s": 12.3},
    ]
    theirs = LoomShield(approvers=APPROVERS)
    theirs.pending["x"] = LoomPending("x", *REFUND, rule="r", required=2)
    assert list(theirs.pending_list()[0]) == list(reg.pending()[0])
    reg.decide(a.id, "approve", by="cfo")
    assert reg.pending()[0]["approvals"] == ["cfo"]
    assert reg.get(a.id).describe(clock.now)["timeout_s"] == 47.7


def test_rejections_have_codes() -> None:
    reg = registry(Clock())
    a = reg.create(*REFUND, rule="r")
    cases = [("nope", "approve", "cfo", "unknown"), (a.id, "approve", "eve", "not-permitted")]
    for approval_id, decision, who, code in cases:
        with pytest.raises(ApprovalRejected) as info:
            reg.decide(approval_id, decision, by=who)
        assert info.value.code == code
        assert info.value.http_error == {"error": f"no pending approval {approval_id!r}"}
    reg.decide(a.id, "deny", by="eve", reason="not today")
    assert (a.state, a.decided_by, a.reason) == ("denied", "eve", "not today")
    with pytest.raises(ApprovalRejected, match="already denied"):
        reg.decide(a.id, "approve", by="cfo")


def test_timeouts_with_an_injected_clock() -> None:
    clock, changes = Clock(), []
    reg = registry(clock)
    reg.subscribe(lambda a, change: changes.append((change, a.state)))
    a = reg.create(*BASH, rule="Bash*")
    assert a.remaining(clock.now) == 60
    clock.now += 61
    with pytest.raises(ApprovalRejected) as info:
        reg.decide(a.id, "approve", by="ops")
    assert info.value.code == "timed-out" and a.via == "timeout"
    b = reg.create(*BASH, rule="Bash*")
    clock.now += 60
    assert reg.pending() == [] and b.state == "timeout"  # listing sweeps overdue ones
    assert reg.settle(a.id) is a and reg.get(a.id) is None
    assert changes == [
        ("created", "pending"),
        ("decided", "timeout"),
        ("created", "pending"),
        ("decided", "timeout"),
        ("removed", "timeout"),
    ]


def test_chain_edit_restarts_the_count_and_edits_are_checked() -> None:
    shield = Shield(
        ShieldConfig(
            confirm=("cap:money_movement",),
            deny=("*(*o-666*)",),
            require_approver={"refund*": {"names": ["a", "b"], "min": 2}},
        )
    )
    p = shield.approvals.create(*REFUND, rule="x")
    shield.approvals.decide(p.id, "approve", by="a")
    assert (
        shield.approvals.decide(p.id, "approve", by="b", edited_input={"order_id": "o-2"})
        == "recorded"
    )
    assert p.approvals == ["b"]  # a approved other arguments
    for bad, why in (
        ([1], "must be a dict"),
        ({"x": {1, 2}}, "not JSON"),
        ({"order_id": "o-666"}, "would be denied"),
    ):
        with pytest.raises(ApprovalRejected, match=why):
            shield.approvals.decide(p.id, "approve", by="a", edited_input=bad)
    assert shield.approvals.decide(p.id, "approve", by="a") == "decided"
    assert (p.edited_input, p.decided_by) == ({"order_id": "o-2"}, "b+a")


def test_edit_then_approve_always_allow_and_reason_end_to_end() -> None:
    shield = Shield(ShieldConfig(confirm=("Bash*",), deny=("Bash(*rm*)",)), clock=lambda: 7.0)
    response = {
        "content": [
            {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "make deploy"}}
        ],
        "stop_reason": "tool_use",
    }

    def edit(a: Any) -> None:
        shield.approvals.decide(
            a.id,
            "approve",
            by="ann",
            edited_input={"command": "make test"},
            always_allow="Bash(*make *)",
        )

    result = shield.screen(response, edit)
    assert result.body["content"][0]["input"] == {"command": "make test"}
    assert list(result.events[0]) == [
        "ts",
        "tool",
        "input",
        "rule",
        "id",
        "action",
        "via",
        "by",
        "edited_input",
        "always_allow",
    ]
    assert result.events[0]["input"] == {"command": "make deploy"}
    assert result.verdicts[0].executed_input == {"command": "make test"}
    again = shield.screen(response)  # now allowed for the session: no event, unchanged body
    assert again.body is response and again.events == []
    assert shield.decide("Bash", {"command": "rm x"}).action == "deny"  # deny still wins

    def refuse(a: Any) -> None:
        shield.approvals.decide(a.id, "deny", by="ann", reason="use the staging box")

    response["content"][0]["input"] = {"command": "ssh prod"}
    result = shield.screen(response, refuse)
    assert result.events[0]["reason"] == "use the staging box"
    assert (
        "-- denied by the operator (reason: use the staging box). The call"
        in result.body["content"][0]["text"]
    )


def test_async_driver_and_cancellation() -> None:
    shield = Shield(ShieldConfig(confirm=("*",)))
    response = {"content": [{"type": "tool_use", "id": "t", "name": "X", "input": {}}]}

    async def approve_later(a: Any) -> None:
        await asyncio.sleep(0)
        shield.approvals.decide(a.id, "approve", by="z")

    result = asyncio.run(shield.screen_async(response, approve_later))
    assert result.body is response and result.events[0]["action"] == "approve"

    async def hang(a: Any) -> None:
        await asyncio.Event().wait()

    async def main() -> None:
        task = asyncio.ensure_future(shield.screen_async(response, hang))
        await asyncio.sleep(0.01)
        assert len(shield.approvals.pending()) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert shield.approvals.pending() == [] and shield.approvals._items == {}
