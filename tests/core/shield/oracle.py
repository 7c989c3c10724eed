"""loom-harness as the oracle: the same flags, the same clock, the same ids.

loom-harness's own ``_build_shield`` (what ``loom proxy`` runs) turns the
flags into its Shield; we build ours from the same flags. Time and uuid4
inside ``loom.shield`` are swapped for fixed ones so events compare exactly,
and operator decisions are made from its ``notify`` hook, which runs before
it blocks; its wait is 0 s, so an undecided call times out at once.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import types
from collections.abc import Callable, Iterator
from typing import Any

import loom.shield as loom_shield
import pytest
from loom.cli import _build_shield

from loom_core.shield import ApprovalRejected, Shield, ShieldConfig

TS = 1_700_000_000.25
# (tool, input) -> ("approve"|"deny", by), a list of them (a chain), or None (time out)
Operator = Callable[[str, Any], Any]


def answers(operator: Operator | None, tool: str, tool_input: Any) -> list[tuple[str, str]]:
    answer = operator(tool, tool_input) if operator else None
    return [] if not answer else answer if isinstance(answer, list) else [answer]


def flag_namespace(flags: dict[str, Any]) -> argparse.Namespace:
    """The namespace loom-harness's CLI parser would produce for these flags."""
    base: dict[str, Any] = dict(
        profile="",
        policy="",
        deny=[],
        allow=[],
        confirm=[],
        rule=[],
        shield_default="allow",
        confirm_timeout=300.0,
        webhook="",
        judge="",
        judge_threshold=0.7,
        trust_after=0,
        trust_ledger="",
        sign_approvals_key_env="",
        require_approver=[],
        break_glass=[],
    )
    base.update(flags)
    return argparse.Namespace(**base)


def ids() -> Iterator[str]:
    return (f"{n:06x}" for n in itertools.count(0xA00001))


@pytest.fixture
def frozen_loom(monkeypatch: pytest.MonkeyPatch) -> None:
    """Freeze loom.shield's clock and uuid4 to the values our Shield gets."""
    monkeypatch.setattr(loom_shield, "time", types.SimpleNamespace(time=lambda: TS))
    counter = ids()
    monkeypatch.setattr(
        loom_shield,
        "uuid",
        types.SimpleNamespace(uuid4=lambda: types.SimpleNamespace(hex=next(counter) + "0" * 26)),
    )


def loom_pair(
    flags: dict[str, Any],
    operator: Operator | None = None,
) -> tuple[Any, Shield, Callable[[Any], None]]:
    """(loom-harness Shield, our Shield, our wait callback) for the same flags."""
    theirs = _build_shield(flag_namespace(flags))
    ours_config = ShieldConfig.from_flags(**{k: v for k, v in flags.items()})
    assert (theirs is None) == (ours_config is None)
    ours = Shield(ours_config, clock=lambda: TS, new_id=ids().__next__)
    theirs.timeout = 0

    def their_notify(p: Any) -> None:
        for decision, who in answers(operator, p.tool, p.input):
            theirs.decide_pending(p.id, decision == "approve", who=who)

    theirs.notify = their_notify

    def our_wait(approval: Any) -> None:
        for decision, who in answers(operator, approval.tool, approval.input):
            with contextlib.suppress(ApprovalRejected):
                ours.approvals.decide(approval.id, decision, by=who or None)

    return theirs, ours, our_wait


def ordered(events: list[dict[str, Any]]) -> list[list[tuple[str, Any]]]:
    """Events with their key order, for exact comparison."""
    return [list(e.items()) for e in events]
