"""Heal's token budget holds when candidates run at the same time.

Why a verbose fake model: a real model writes up to the request's ``max_tokens``,
so the fake bills every call its input estimate plus a long answer (never more
than it was allowed). The provider counts what it billed itself, so the test
does not trust the heal's own bookkeeping.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from loom_core.doctor import checkup
from loom_core.fork.budget import Grant, SharedBudget, input_bound
from loom_core.formats.loader import load
from loom_core.heal.checks import build_check
from loom_core.heal.engine import Healer, HealOptions
from loom_core.providers.base import ModelReply, ModelRequest
from loom_core.providers.scripted import ScriptedProvider, request_tokens
from tests.core.doctor.test_loom_doctor import mixed_run
from tests.core.heal.scenario import poisoned_run

ANSWER = 1500  # what the verbose model writes when it may


class Bill:
    """Every call's billed tokens, from every candidate's provider."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.lock = threading.Lock()

    def provider(self) -> ScriptedProvider:
        def answer(req: ModelRequest) -> ModelReply:
            usage = {
                "input_tokens": request_tokens(req),
                "output_tokens": min(req.max_tokens, ANSWER),
            }
            with self.lock:
                self.calls.append(usage["input_tokens"] + usage["output_tokens"])
            return ModelReply("a long answer", [], "end_turn", usage)

        return ScriptedProvider(responder=answer)


@pytest.mark.parametrize("concurrency", [2, 3])
@pytest.mark.parametrize("run,budget", [(poisoned_run, 3000), (mixed_run, 5000)])
def test_billed_tokens_stay_within_the_budget(
    tmp_path: Path, run, budget: int, concurrency: int
) -> None:
    path = run(tmp_path)
    bill = Bill()
    healer = Healer(
        load(path),
        path,
        build_check(require=["never said"]),
        bill.provider,
        tmp_path / "c",
        HealOptions(budget_tokens=budget, concurrency=concurrency),
    )
    result = healer.run(checkup(healer.doc).findings)
    assert len(result.candidates) >= 2 and bill.calls  # something was tried
    assert sum(bill.calls) <= budget, (bill.calls, [c.to_dict() for c in result.candidates])
    assert result.tokens == sum(bill.calls)
    assert any(
        "token budget" in str(c.error) for c in result.candidates if c.status == "skipped"
    )  # the budget, not the model, ended the heal


def test_a_budget_too_small_for_any_call_tries_nothing(tmp_path: Path) -> None:
    path = poisoned_run(tmp_path)
    bill = Bill()
    healer = Healer(
        load(path),
        path,
        build_check(require=["never said"]),
        bill.provider,
        tmp_path / "c",
        HealOptions(budget_tokens=100, concurrency=2),
    )
    result = healer.run(checkup(healer.doc).findings)
    assert bill.calls == [] and result.tokens == 0
    assert {c.status for c in result.candidates} == {"skipped"}
    assert "the next call may bill up to" in str(result.candidates[0].error)


def test_a_reservation_waits_for_calls_in_flight_and_caps_the_answer() -> None:
    request = ModelRequest("system", [{"role": "user", "content": "hi"}], max_tokens=4096)
    need = input_bound(request)
    budget = SharedBudget(need * 2 + 100)
    first = budget.reserve(request)
    assert first is not None and first.max_output == need + 100  # capped to what is left
    assert budget.left == need * 2 + 100 - first.tokens
    released: list[Grant | None] = []
    waiter = threading.Thread(target=lambda: released.append(budget.reserve(request)))
    waiter.start()
    waiter.join(0.3)
    assert waiter.is_alive()  # nothing fits while the first call is in flight
    budget.settle(first, need + 10)
    waiter.join(5)
    assert not waiter.is_alive() and released[0] is not None
    assert released[0].max_output == 100 - 10 + need - need  # what the first call left
    budget.settle(released[0], 0)
    assert budget.spent == need + 10 and budget.reserved == 0
