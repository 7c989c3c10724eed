"""Our ``doctor`` against loom-harness's ``loom doctor`` on runs loom-harness itself recorded.

Why real runs: hand-built files can share our misreadings; here loom-harness's
agent loop writes the trace (a huge fetched page, a lookup nobody mentions,
the same snapshot twice) and both command lines read the same file. Their
printed findings must match line for line (kind, severity, message, token
numbers, quoted snippet); we add ``at step N`` and our own kinds.
"""

from __future__ import annotations

import re
from pathlib import Path

from loom import Agent, tool

from loom_core.doctor import HARNESS_KINDS, checkup
from loom_core.formats.loader import load
from tests.core.clis import core, loom
from tests.core.harness_runs import Recorded, call, reply, scripted

PAGE = " ".join(f"paragraph{i} about caching and eviction" for i in range(150))
SNAPSHOT = "status: replicas healthy, queue depth nominal, latency within budget, disk ample"


@tool
def fetch(url: str) -> str:
    """Fetch a web page (a big one)."""
    return PAGE


@tool
def lookup(q: str) -> str:
    """Look something up (nobody reads the answer)."""
    return "zeppelin marmalade quantum orchestra"


@tool
def snapshot(region: str) -> str:
    """The same status, whatever the region."""
    return SNAPSHOT


def bloated_run(out: Path, journal: Path | None = None) -> Path:
    """Three harness findings in one run; with ``journal`` it is journaled too."""
    agent = Agent(
        name="researcher",
        system="You research.",
        tools=[fetch, lookup, snapshot],
        journal=None if journal is None else str(journal),
        provider=scripted(
            reply(
                "Fetching.",
                [
                    call("f1", "fetch", url="https://example.com/cache"),
                    call("l1", "lookup", q="weather"),
                ],
                200,
                20,
            ),
            reply("Checking status.", [call("s1", "snapshot", region="eu")], 900, 20),
            reply("And again.", [call("s2", "snapshot", region="us")], 1000, 20),
            reply("Caching with eviction is fine; replicas are healthy.", [], 1100, 30),
        ),
    )
    path = out / "bloated.loom.json"
    agent.run("Is our caching OK?").save(str(path))
    return path


def printed_findings(stdout: str) -> tuple[str, list[tuple[str, str]]]:
    """(tokens part of the header, [(finding line, snippet line)] in printed order) with our
    extras removed."""
    lines = stdout.rstrip("\n").split("\n")
    tokens = re.search(r"\(?(\d+) tokens", lines[0])
    assert tokens is not None, lines[0]
    pairs = []
    for head, snippet in zip(lines[1::2], lines[2::2], strict=True):
        kind = head.split("] ", 1)[1].split(":", 1)[0]
        if kind in HARNESS_KINDS:
            pairs.append(
                (head, re.sub(r" (at|in the user prompt before) step \d+(;.*)?$", "", snippet))
            )
    return tokens.group(1), pairs


def assert_same_as_loom_doctor(path: Path) -> list[tuple[str, str]]:
    """The same harness findings in the same order, and ours only after them."""
    theirs, ours = loom("doctor", path), core("doctor", path)
    assert ours.stderr == "" and theirs.returncode in (0, 1)
    assert printed_findings(ours.stdout) == printed_findings(theirs.stdout)
    heads = ours.stdout.rstrip("\n").split("\n")[1::2]
    kinds = [line.split("] ", 1)[1].split(":", 1)[0] for line in heads]
    harness = [k in HARNESS_KINDS for k in kinds]
    assert harness == sorted(harness, reverse=True), kinds
    if theirs.returncode == 1:
        assert ours.returncode == 1
    return printed_findings(theirs.stdout)[1]


def test_a_bloated_run_gets_the_same_three_findings(tmp_path: Path) -> None:
    path = bloated_run(tmp_path)
    found = assert_same_as_loom_doctor(path)
    kinds = sorted(line.split("] ", 1)[1].split(":")[0] for line, _ in found)
    assert kinds == ["duplicate", "oversized", "unused"]
    ours = core("doctor", path).stdout
    assert "[high] oversized: tool:fetch result is" in ours
    assert (
        "[warn] unused: tool:lookup result (9 tokens) never referenced by any later answer" in ours
    )
    assert (
        "[warn] duplicate: tool:snapshot content nearly identical to earlier tool:snapshot" in ours
    )


def test_every_recorded_scenario_agrees(harness_traces: dict[str, Recorded]) -> None:
    for rec in harness_traces.values():
        assert_same_as_loom_doctor(rec.path)


def test_a_journal_reads_like_the_trace_of_the_same_run(tmp_path: Path) -> None:
    path = tmp_path / "bloated.jsonl"
    trace = bloated_run(tmp_path, journal=path)
    from_journal, from_trace = checkup(load(path)), checkup(load(trace))
    assert from_journal.total_tokens == from_trace.total_tokens
    assert [(f.kind, f.message, f.step) for f in from_journal.findings] == [
        (f.kind, f.message, f.step) for f in from_trace.findings
    ]
    assert {f.kind for f in from_trace.findings} >= set(HARNESS_KINDS)


@tool
def deploy(env: str) -> str:
    """Fails every time (an error loop, one of our kinds, early in the run)."""
    raise RuntimeError("quota exhausted")


def mixed_run(out: Path) -> Path:
    """Step order differs from loom doctor's: the unused lookup and an error loop come before
    the oversized page, the duplicate snapshot last."""
    agent = Agent(
        name="ops",
        system="You operate.",
        tools=[fetch, lookup, snapshot, deploy],
        provider=scripted(
            reply("Looking.", [call("l1", "lookup", q="weather")], 100, 10),
            *[
                reply("Deploying.", [call(f"d{k}", "deploy", env="prod")], 150, 10)
                for k in range(3)
            ],
            reply("Fetching.", [call("f1", "fetch", url="https://example.com")], 200, 10),
            reply("Status.", [call("s1", "snapshot", region="eu")], 900, 10),
            reply("Again.", [call("s2", "snapshot", region="us")], 1000, 10),
            reply("Caching with eviction is fine; replicas are healthy.", [], 1100, 20),
        ),
    )
    path = out / "mixed.loom.json"
    agent.run("Is our caching OK?").save(str(path))
    return path


def test_findings_are_listed_in_loom_doctors_order(tmp_path: Path) -> None:
    path = mixed_run(tmp_path)
    found = assert_same_as_loom_doctor(path)
    assert found[0][0].startswith("  [high] oversized: tool:fetch")
    report = checkup(load(path))
    kinds = [f.kind for f in report.findings]
    assert "error_loop" in kinds and kinds[: len(found)] == [
        line.split("] ", 1)[1].split(":")[0] for line, _ in found
    ]
    loop, page = report.of_kind("error_loop")[0].step, report.of_kind("oversized")[0].step
    assert loop is not None and page is not None and loop < page  # listed after, happened before
