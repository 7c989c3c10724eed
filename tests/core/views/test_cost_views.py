"""One step, one number: every face prices a step with cache and reasoning tokens alike.

Two runs carry such tokens the two ways they reach a trace: a harness trace whose
usage is Anthropic's own (cache fields beside input/output), and a proxy trace made
by loom-harness's recorder, whose effects keep input/output only while its ``wire``
keeps OpenAI's full usage. The expected dollars are worked out by hand from the
genai-prices rates (``test_pricing`` asserts those rates).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from loom.proxy import WireRecorder as LoomRecorder

from loom_core.diff import compare
from loom_core.fork.edits import Edit
from loom_core.fork.plan import dry_run
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict
from loom_core.views.steps import step_row
from loom_core.views.summary import summarize
from loom_core.views.timeline import K_MODEL, build_timeline
from tests.core.diff.tracegen import basic_run, write

# claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million
ANTHROPIC_USAGE = [
    (
        {
            "input_tokens": 1000,
            "output_tokens": 200,
            "cache_creation_input_tokens": 2000,
            "cache_read_input_tokens": 10000,
        },
        (1000 * 3 + 2000 * 3.75 + 10000 * 0.3 + 200 * 15) / 1e6,
    ),
    (
        {
            "input_tokens": 500,
            "output_tokens": 100,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 13000,
        },
        (500 * 3 + 13000 * 0.3 + 100 * 15) / 1e6,
    ),
    ({"input_tokens": 1500, "output_tokens": 20}, (1500 * 3 + 20 * 15) / 1e6),
]
# gpt-4o: $2.50 in, $1.25 cached in, $10 out (reasoning billed as output)
OPENAI_USAGE = [
    (
        {
            "prompt_tokens": 5000,
            "completion_tokens": 300,
            "total_tokens": 5300,
            "prompt_tokens_details": {"cached_tokens": 4000},
            "completion_tokens_details": {"reasoning_tokens": 100},
        },
        (1000 * 2.5 + 4000 * 1.25 + 300 * 10) / 1e6,
    ),
    (
        {
            "prompt_tokens": 6000,
            "completion_tokens": 50,
            "total_tokens": 6050,
            "prompt_tokens_details": {"cached_tokens": 4800},
        },
        (1200 * 2.5 + 4800 * 1.25 + 50 * 10) / 1e6,
    ),
]


def harness_run() -> list[dict[str, Any]]:
    run = basic_run()
    models = [e for e in run if e["kind"] == "model"]
    for effect, (usage, _usd) in zip(models, ANTHROPIC_USAGE, strict=True):
        effect["result"]["usage"] = usage
    return run


def proxy_trace(path: Path) -> Path:
    """Two OpenAI Chat exchanges recorded by loom-harness's own wire recorder."""
    rec = LoomRecorder()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You work."},
        {"role": "user", "content": "hello"},
    ]
    for n, (usage, _usd) in enumerate(OPENAI_USAGE):
        text = f"answer {n}"
        rec.record(
            {"model": "gpt-4o", "messages": copy.deepcopy(messages)},
            {
                "id": f"c{n}",
                "object": "chat.completion",
                "model": "gpt-4o",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": text},
                    }
                ],
                "usage": usage,
            },
        )
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "more"}]
    data = rec.to_dict()
    assert all(
        set(e["result"]["usage"]) == {"input_tokens", "output_tokens"}
        for e in data["log"]
        if e["kind"] == "model"
    )  # the effects dropped the rest
    save_dict(data, path)
    return path


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, tuple[Path, list[float]]]:
    return {
        "harness": (
            write(tmp_path / "h.loom.json", harness_run()),
            [usd for _u, usd in ANTHROPIC_USAGE],
        ),
        "proxy": (proxy_trace(tmp_path / "p.loom.json"), [usd for _u, usd in OPENAI_USAGE]),
    }


@pytest.mark.parametrize("name", ["harness", "proxy"])
def test_every_face_shows_the_same_cost(
    runs: dict[str, tuple[Path, list[float]]], name: str
) -> None:
    path, expected = runs[name]
    doc = load(path)
    tl = build_timeline(doc)
    model_steps = [s for s in range(len(tl)) if tl.kind[s] == K_MODEL]
    assert [tl.cost[s] for s in model_steps] == pytest.approx(expected, rel=1e-12)
    rows = [step_row(tl, s) for s in model_steps]
    assert [r.cost for r in rows] == [tl.cost[s] for s in model_steps]
    assert [r.cost_text for r in rows] == [f"${usd:.4f}" for usd in expected]
    assert tl.total_cost == pytest.approx(sum(expected), rel=1e-12)
    assert summarize(doc, "valid")["cost_usd"] == round(tl.total_cost, 6)
    assert "genai-prices" in summarize(doc, "valid")["prices"]
    # Compare against itself: the per-row costs are the steps' own
    diff = compare(doc, doc)
    from loom_core.diff.usage import run_usage

    usage = run_usage(doc)
    assert [usage.cost[tl.effect_of[s]] for s in model_steps] == [tl.cost[s] for s in model_steps]
    assert diff.totals.a.cost == pytest.approx(tl.total_cost, rel=1e-12)


def test_compare_deltas_are_the_differences_of_step_costs(tmp_path: Path) -> None:
    a = write(tmp_path / "a.loom.json", harness_run())
    plain = harness_run()
    plain[0]["result"]["usage"] = {"input_tokens": 1000, "output_tokens": 200}  # cache gone
    b = write(tmp_path / "b.loom.json", plain)
    da, db = load(a), load(b)
    ta, tb = build_timeline(da), build_timeline(db)
    diff = compare(da, db)
    row = next(r for r in range(len(diff.rows)) if diff.rows[r].a == 0)
    sa, sb = ta.step_of_effect[0], tb.step_of_effect[0]
    assert diff.row_delta(row).cost == pytest.approx(tb.cost[sb] - ta.cost[sa], rel=1e-12)
    assert diff.row_delta(row).cost == pytest.approx(
        (1000 * 3 + 200 * 15) / 1e6 - ANTHROPIC_USAGE[0][1]
    )


def test_a_fork_estimate_of_unchanged_calls_is_what_they_cost(
    runs: dict[str, tuple[Path, list[float]]],
) -> None:
    path, expected = runs["harness"]
    doc = load(path)
    plan = dry_run(doc, path, 2, Edit(), 20)  # the last two model calls, context unchanged
    assert plan.live_calls == 2 and plan.cost_usd == pytest.approx(sum(expected[1:]), rel=1e-12)
    # tokens stay loom's count (its budget's): Anthropic input excludes cached tokens
    assert (plan.input_tokens, plan.output_tokens) == (500 + 1500, 100 + 20)
    grown = dry_run(doc, path, 2, Edit(inject="x" * 400), 20)  # ~100 uncached tokens more
    added = grown.input_tokens - plan.input_tokens
    assert added > 0
    assert grown.cost_usd == pytest.approx(sum(expected[1:]) + added * 3 / 1e6, rel=1e-9)


def test_scripted_runs_and_branches_cost_nothing_and_say_so(tmp_path: Path) -> None:
    offline = write(tmp_path / "s.loom.json", harness_run(), model_id="scripted")
    tl = build_timeline(load(offline))
    steps = [s for s in range(len(tl)) if tl.kind[s] == K_MODEL]
    assert tl.total_cost == 0.0 and tl.cost_text() == "$0 offline"
    assert {tl.cost_text(s) for s in steps} == {"$0 offline"}
    assert step_row(tl, steps[0]).to_dict()["offline"] is True
    # a branch re-run on the scripted provider: the parent's model name, but offline
    data = load(write(tmp_path / "b.loom.json", harness_run()))
    raw = __import__("json").loads(Path(data.path).read_text())
    raw["fork"] = {"provider": "scripted", "prefix": 2, "mode": "model"}
    save_dict(raw, tmp_path / "branch.loom.json")
    branch = build_timeline(load(tmp_path / "branch.loom.json"))
    first, *tail = [branch.step_of_effect[e] for e in (0, 2, 4)]
    assert branch.cost[first] == pytest.approx(ANTHROPIC_USAGE[0][1])  # the recorded prefix
    assert {branch.cost_text(s) for s in tail} == {"$0 offline"}
    assert branch.total_cost == pytest.approx(ANTHROPIC_USAGE[0][1])
    plan = dry_run(load(tmp_path / "s.loom.json"), tmp_path / "s.loom.json", 2, Edit(), 20)
    assert plan.offline and plan.cost_usd == 0.0


def test_a_live_proxy_journal_prices_from_its_sidecar(tmp_path: Path) -> None:
    """Our proxy's journal keeps input/output only; the sidecar beside it has the rest,
    written first, so each new model step is priced in full as it appears."""
    from loom_core.formats.journal_writer import JournalWriter
    from loom_core.proxy.sidecar_writer import SidecarWriter
    from loom_core.views.timeline import TimelineBuilder

    trace = proxy_trace(tmp_path / "p.loom.json")
    data = __import__("json").loads(trace.read_text())
    base = str(tmp_path / "live")
    side = SidecarWriter(base + ".exchanges.jsonl", "http://127.0.0.1:1", False)
    journal = JournalWriter(base + ".journal.jsonl")
    journal.header(data["model"], data["system"], data["episodes"])
    builder = None
    try:
        for n, (entry, response) in enumerate(zip(data["log"], data["wire"], strict=True)):
            side.exchange(
                n, "/v1/chat/completions", "openai", {"model": "gpt-4o"}, response, [], 1.0
            )
            journal.effect(entry)
            doc = load(base + ".journal.jsonl")
            if builder is None:
                builder = TimelineBuilder(doc)
            builder.tl.doc.effects[:] = doc.effects  # a live tab's document grows in place
            builder.extend()
            tl = builder.tl
            assert tl.cost[tl.step_of_effect[n]] == pytest.approx(OPENAI_USAGE[n][1], rel=1e-12)
    finally:
        side.close(clean=True)
        journal.close()
    final = build_timeline(load(base + ".journal.jsonl"))
    assert final.total_cost == pytest.approx(build_timeline(load(trace)).total_cost, rel=1e-12)
