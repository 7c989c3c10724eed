"""Our findings: stale results, context bloat, tool loops and error loops.

Why hand-built traces: each rule has an edge (3 calls, 2 retries, twice the
first and over 4,000 input tokens, "still in the context") that a test should
state exactly, on one side and the other. Placement facts heal relies on
(redact targets, the first model step that saw the item) are checked too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loom_core.doctor import (
    CONTEXT_BLOAT,
    ERROR_LOOP,
    STALE,
    TOOL_LOOP,
    Checkup,
    Finding,
    checkup_path,
)
from tests.core.doctor.traces import Trace


def run(t: Trace, tmp_path: Path) -> Checkup:
    return checkup_path(t.save(tmp_path / "t.loom.json"))


def only(report: Checkup, kind: str) -> list[Finding]:
    return report.of_kind(kind)


# -- stale -------------------------------------------------------------------


@pytest.mark.parametrize("proxy", [False, True])
def test_a_reread_file_makes_the_old_result_stale(tmp_path: Path, proxy: bool) -> None:
    t = Trace("fix the port", proxy=proxy)
    old = t.use("read_file", "port: 80", path="cfg.yaml")
    t.use("write_file", "ok", path="cfg.yaml", content="port: 81")
    new = t.use("read_file", "port: 81", path="cfg.yaml")
    seen = t.model("Port is 81 now.")
    (f,) = only(run(t, tmp_path), STALE)
    assert (f.step, f.effect, f.related, f.redact_targets) == (old, old, (new, seen), (old,))
    assert f.message == (
        f'tool:read_file result for path="cfg.yaml" superseded at step {new} '
        f"(changed) but still in context at step {seen}"
    )
    assert f.snippet == "port: 80" and f.severity == "warn" and f.tokens == 2
    assert f.model_step == old + 1  # the call right after the result first saw it
    assert 0 < f.share < 1


def test_resource_arguments_decide_not_the_others(tmp_path: Path) -> None:
    t = Trace()
    old = t.use("read_file", "lines 1-10", path="a.py", offset=0)
    t.use("read_file", "lines 11-20", path="a.py", offset=10)
    t.use("read_file", "other file", path="b.py", offset=0)
    t.model("done")
    assert [f.effect for f in only(run(t, tmp_path), STALE)] == [old]


def test_without_resource_arguments_equal_arguments_decide(tmp_path: Path) -> None:
    t = Trace()
    old = t.use("get_status", "degraded", service="api", verbose=True)
    t.use("get_status", "fine", service="db", verbose=True)
    new = t.use("get_status", "recovered", verbose=True, service="api")  # key order differs
    t.model("done")
    (f,) = only(run(t, tmp_path), STALE)
    assert f.effect == old and f.related[0] == new
    assert "for the same arguments superseded" in f.message and "(changed)" in f.message


def test_an_identical_reread_is_not_stale(tmp_path: Path) -> None:
    """Same resource, same content: a repeat, not a contradiction -- not reported as stale."""
    t = Trace()
    t.use("read_file", "port: 80", path="cfg.yaml")
    t.use("read_file", "port: 80", path="cfg.yaml")
    t.model("done")
    assert only(run(t, tmp_path), STALE) == []


def test_not_stale_when_no_model_call_saw_both(tmp_path: Path) -> None:
    t = Trace()
    t.use("read_file", "v1", path="a")
    t.use("read_file", "v2", path="a")  # the run ends here: nobody saw both
    assert only(run(t, tmp_path), STALE) == []


def test_not_stale_across_tools_or_agents(tmp_path: Path) -> None:
    t = Trace()
    t.use("read_file", "v1", path="a")
    t.use("cat_file", "v2", path="a")  # another tool
    c = t.call("read_file", path="a")  # a sub-agent reads it in its own context
    t.model("", [c], depth=1)
    t.result(c, "v3", depth=1)
    t.model("child done", depth=1)
    t.model("parent done")
    assert only(run(t, tmp_path), STALE) == []


@pytest.mark.parametrize("compacted", [True, False])
def test_not_stale_once_compaction_dropped_the_old_result(tmp_path: Path, compacted: bool) -> None:
    t = Trace()
    t.use("read_file", "v1", path="a")
    for n in range(3):
        t.use("tick", f"t{n}", n=n)
    if compacted:
        t.effect("compact", "earlier: read a, ticked")
    t.use("read_file", "v2", path="a")
    t.model("done")
    assert bool(only(run(t, tmp_path), STALE)) is not compacted


# -- context bloat -----------------------------------------------------------


def _bloat_trace(*inputs: int) -> Trace:
    t = Trace()
    for n, t_in in enumerate(inputs):
        t.model(f"call {n}", t_in=t_in)
    return t


@pytest.mark.parametrize(
    "inputs, flagged",
    [
        ((1000, 1500, 4001), True),
        ((1000, 4001), False),  # only two calls with usage
        ((1000, 1500, 4000), False),  # last not above 4,000
        ((2001, 3000, 4002), False),  # last not above twice the first
        ((0, 1000, 0, 1500, 4001), True),  # zero counts are not calls with usage
        ((0, 2001, 3000, 4002), False),
    ],
)
def test_bloat_edges(tmp_path: Path, inputs: tuple[int, ...], flagged: bool) -> None:
    assert bool(only(run(_bloat_trace(*inputs), tmp_path), CONTEXT_BLOAT)) is flagged


def test_bloat_names_the_step_and_the_item_that_added_most(tmp_path: Path) -> None:
    t = Trace()
    t.use("search", "small", t_in=1000, q="x")
    t.use("search", "tiny", t_in=1200, q="y")
    big = t.use("fetch", "page " * 3000, t_in=1300, url="u")
    jump = t.model("summarised", t_in=5000)
    t.model("done", t_in=5200)
    (f,) = only(run(t, tmp_path), CONTEXT_BLOAT)
    assert (f.step, f.effect, f.tokens, f.redact_targets) == (jump, jump, 3700, (big,))
    assert f.message == (
        "input tokens grew 5.2x over 5 model calls (1,000 -> 5,200); "
        f"step {jump} added the most (+3,700); largest new item: step {big}"
    )
    assert f.snippet.startswith("page page") and f.clipped
    assert f.share == pytest.approx(3700 / 5200)
    assert big in f.related


# -- tool loops --------------------------------------------------------------


def test_the_same_call_three_times_is_a_tool_loop(tmp_path: Path) -> None:
    t = Trace()
    calls, results = [], []
    for _ in range(3):
        results.append(t.use("ping", "pong", host="a", port=1))
        calls.append(results[-1] - 1)
    t.model("stopping")
    (f,) = only(run(t, tmp_path), TOOL_LOOP)
    assert f.message == (
        f'ping({{"host": "a", "port": 1}}) called 3 times with the same '
        f"arguments (steps {calls[0]}, {calls[1]}, {calls[2]})"
    )
    assert (f.step, f.related, f.redact_targets) == (results[2], tuple(calls), tuple(results))
    assert only(run(t, tmp_path), ERROR_LOOP) == []


@pytest.mark.parametrize(
    "args",
    [
        [{"host": "a"}, {"host": "a"}],  # twice only
        [{"host": "a"}, {"host": "a"}, {"host": "b"}],  # different arguments
    ],
)
def test_not_a_tool_loop(tmp_path: Path, args: list[dict[str, str]]) -> None:
    t = Trace()
    for a in args:
        t.use("ping", "pong", **a)
    t.model("ok")
    assert only(run(t, tmp_path), TOOL_LOOP) == []


def test_argument_order_does_not_matter_and_calls_can_share_a_turn(tmp_path: Path) -> None:
    t = Trace()
    cs = [t.call("ping", host="a", port=1), t.call("ping", port=1, host="a")]
    t.model("", cs)
    for c in cs:
        t.result(c, "pong")
    t.use("ping", "pong", port=1, host="a")
    t.model("ok")
    (f,) = only(run(t, tmp_path), TOOL_LOOP)
    assert "called 3 times" in f.message


# -- error loops -------------------------------------------------------------

ERRORS = [
    "ERROR: RuntimeError: boom",
    {"error": "rate limited"},
    {"is_error": True, "content": "denied"},
]


@pytest.mark.parametrize("failure", ERRORS)
def test_a_failure_retried_twice_is_an_error_loop(tmp_path: Path, failure: object) -> None:
    t = Trace()
    results = [t.use("deploy", failure, env="prod") for _ in range(3)]
    t.model("giving up")
    report = run(t, tmp_path)
    (f,) = only(report, ERROR_LOOP)
    assert f.severity == "high" and f.step == results[2]
    assert f.redact_targets == tuple(results)
    assert f.message.startswith(
        'deploy({"env": "prod"}) failed and was retried unchanged 2 time(s)'
    )
    assert only(report, TOOL_LOOP) == []  # the more specific diagnosis only


@pytest.mark.parametrize(
    "outcomes, kinds",
    [
        (["ERROR: x", "ERROR: x"], set()),  # one retry
        (["ERROR: x", "ERROR: x", "deployed"], {ERROR_LOOP}),  # two retries, then it worked
        (["ERROR: x", "deployed", "deployed"], {TOOL_LOOP}),  # one retry after a failure
        (["fine", "fine", "ERROR: x"], {TOOL_LOOP}),
    ],
)
def test_error_loop_edges(tmp_path: Path, outcomes: list[str], kinds: set[str]) -> None:
    t = Trace()
    for value in outcomes:
        t.use("deploy", value, env="prod")
    t.model("done")
    report = run(t, tmp_path)
    assert {f.kind for f in report.findings} & {TOOL_LOOP, ERROR_LOOP} == kinds


def test_changed_arguments_are_not_a_retry(tmp_path: Path) -> None:
    t = Trace()
    for env in ("prod", "prod-eu", "prod-us"):
        t.use("deploy", "ERROR: x", env=env)
    t.model("done")
    assert only(run(t, tmp_path), ERROR_LOOP) == []


# -- all kinds together ----------------------------------------------------------


def test_findings_are_sorted_by_step(tmp_path: Path) -> None:
    t = Trace()
    for _ in range(3):
        t.use("deploy", "ERROR: RuntimeError: boom", env="prod", t_in=1000)
    t.use("read_file", "v1", path="a", t_in=2000)
    t.use("read_file", "v2", path="a", t_in=4500)
    t.model("done", t_in=4600)
    report = run(t, tmp_path)
    steps = [f.step for f in report.findings]
    assert steps == sorted(steps)
    assert {f.kind for f in report.findings} >= {ERROR_LOOP, STALE, CONTEXT_BLOAT}
