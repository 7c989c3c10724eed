"""Heal: checkup flags the poisoned result, a redacting fork passes the check, loom-harness
accepts the winner; budgets, cancellation and the CLI's exit codes hold."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loom_core.doctor import checkup
from loom_core.formats.loader import load
from loom_core.heal.checks import CheckError, build_check
from loom_core.heal.engine import Healer, HealOptions, plan_repairs
from loom_core.providers.base import ModelReply
from loom_core.providers.scripted import ScriptedProvider
from tests.core.clis import core
from tests.core.fork.checks import loom_ok, read
from tests.core.heal.scenario import BAD, GOOD, falls_for_poison, poisoned_run, responder
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.harness import running_upstream

FAKE_KEY = "sk-ant-fake-" + "7" * 20


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return poisoned_run(tmp_path_factory.mktemp("heal"))


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream(responder) as up:
        yield up


def scripted_model() -> ScriptedProvider:
    return ScriptedProvider(
        responder=lambda req: ModelReply(
            falls_for_poison(req.messages), [], "end_turn", {"input_tokens": 40, "output_tokens": 5}
        )
    )


def test_checkup_flags_the_poison(parent: Path) -> None:
    found = checkup(load(parent))
    oversized = found.of_kind("oversized")
    assert len(oversized) == 1 and oversized[0].step == 2 and oversized[0].model_step == 3
    assert oversized[0].redact_targets == (2,)


def test_heal_through_the_anthropic_sdk(
    parent: Path, upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    regress = tmp_path / "regressions"
    done = core(
        "heal",
        parent,
        "--forbid",
        BAD,
        "--provider",
        "anthropic",
        "--base-url",
        upstream.url,
        "--out-dir",
        tmp_path / "cands",
        "--save-regression",
        regress,
        "--json",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "healed" and result["winner"].startswith("redact-oversized-")
    first = result["candidates"][0]
    assert first["label"] == result["winner"] and first["status"] == "passed"
    assert first["output"] == GOOD and first["diverged_at"] == 3  # the edit, at the fork step
    # one definition of the first divergence: `diff` (and Compare) name the same step
    diff = core("diff", parent, result["winner_path"], "--json")
    assert json.loads(diff.stdout)["first_divergence"]["b_seq"] == first["diverged_at"]
    branch = read(Path(result["winner_path"]))
    assert branch["healed_by"] == result["winner"] and branch["output"] == GOOD
    assert "PWNED" not in json.dumps(branch["log"][3]["result"])  # the edit snapshot: redacted
    loom_ok(Path(result["winner_path"]))
    saved = list(regress.glob("healed-*.loom.json"))
    assert len(saved) == 1 and len(saved[0].name) == len("healed-0123456789.loom.json")
    loom_ok(saved[0])
    sent = [s.body for s in upstream.seen]
    assert sent and all("IGNORE ALL" not in json.dumps(b["messages"]) for b in sent[:1])


def test_a_run_that_passes_is_returned_as_is(parent: Path, tmp_path: Path) -> None:
    done = core(
        "heal", parent, "--require", BAD, "--provider", "scripted", "--out-dir", tmp_path / "c"
    )
    assert done.returncode == 0 and "already passes" in done.stdout
    assert not (tmp_path / "c").exists()


def test_no_winner_is_a_result(parent: Path, tmp_path: Path) -> None:
    done = core(
        "heal",
        parent,
        "--require",
        "never said",
        "--provider",
        "scripted",
        "--out-dir",
        tmp_path / "c",
    )
    assert done.returncode == 1, done.stderr
    assert "no repair passed" in done.stdout and "failed" in done.stdout


def test_budget_bounds_the_heal(parent: Path, tmp_path: Path) -> None:
    healer = Healer(
        load(parent),
        parent,
        build_check(require=["never said"]),
        scripted_model,
        tmp_path / "c",
        HealOptions(budget_tokens=1100),
    )
    result = healer.run(checkup(healer.doc).findings)
    statuses = [c.status for c in result.candidates]
    assert result.status == "no_winner" and statuses[0] == "failed" and len(statuses) >= 2
    assert all(s == "skipped" for s in statuses[1:])
    assert all("token budget" in str(c.error) for c in result.candidates[1:])
    assert result.tokens == 45  # one call fitted; the next ones' worst cases did not


def test_cancel_stops_the_heal(parent: Path, tmp_path: Path) -> None:
    from loom_core.providers.base import CancelToken

    cancel = CancelToken()

    def provider() -> ScriptedProvider:
        def answer(req: Any) -> ModelReply:
            cancel.cancel()  # the user presses Cancel while the first call is in flight
            return ModelReply(GOOD, [], "end_turn", {"input_tokens": 1, "output_tokens": 1})

        return ScriptedProvider(responder=answer)

    healer = Healer(
        load(parent),
        parent,
        build_check(forbid=[BAD]),
        provider,
        tmp_path / "c",
        HealOptions(concurrency=2),
        cancel=cancel,
    )
    result = healer.run(checkup(healer.doc).findings)
    assert result.status == "cancelled" and result.winner is None
    assert {c.status for c in result.candidates} <= {"cancelled"}


def test_concurrent_candidates_pick_the_first_ranked_pass(parent: Path, tmp_path: Path) -> None:
    seen: list[str] = []
    healer = Healer(
        load(parent),
        parent,
        build_check(forbid=[BAD]),
        scripted_model,
        tmp_path / "c",
        HealOptions(concurrency=2),
        on_update=lambda c: seen.append(f"{c.label}:{c.status}"),
    )
    result = healer.run(checkup(healer.doc).findings)
    assert result.status == "healed" and result.winner is result.candidates[0]
    assert result.winner.kind == "oversized"
    assert f"{result.winner.label}:running" in seen and f"{result.winner.label}:passed" in seen


def test_bad_checks_are_bad_input(parent: Path, tmp_path: Path) -> None:
    with pytest.raises(CheckError):
        build_check()
    for args in (["--regex", "("], ["--check", "nosuchmodule:f"], ["--check", "json"]):
        done = core("heal", parent, *args, "--provider", "scripted", "--out-dir", tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("error: --"), done.stderr
    missing = core("heal", tmp_path / "nope.loom.json", "--forbid", "x")
    assert missing.returncode == 2 and "nope.loom.json" in missing.stderr


def test_planning_is_a_plain_function(parent: Path, tmp_path: Path) -> None:
    """Planning needs no provider, check or output folder (the app plans before any)."""
    doc = load(parent)
    findings = checkup(doc).findings
    planned = plan_repairs(doc, parent, findings, HealOptions(max_candidates=3))
    healer = Healer(
        load(parent),
        parent,
        build_check(require=["x"]),
        scripted_model,
        tmp_path,
        HealOptions(max_candidates=3),
    )
    assert planned and [c.label for c in planned] == [c.label for c in healer.plan(findings)]


def test_a_repair_that_cannot_fork_says_why_without_the_runs_path() -> None:
    """The sample's duplicate is first seen by a sub-agent's call: not a fork point. The
    heal table said "skipped (/full/path/sample.loom.json: step 19 is …)"."""
    sample = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"
    doc = load(sample)
    skipped = [c for c in plan_repairs(doc, sample, checkup(doc).findings) if c.status == "skipped"]
    assert skipped and skipped[0].error.startswith("step 19 is a sub-agent's model step")
    assert str(sample) not in skipped[0].error
