"""Every real Inspect AI log of the real-world folder (``inspect``) reads with inspect's own facts.

The facts come from inspect itself (``read_eval_log`` and the log's ``stats.model_usage``,
in a child process: ``tests/inspect_producer.py --facts``), never from our reader: per
sample, its model and tool events, the grader calls its scorers made, their tokens, the
sample's answer and scores, and how deep each call sits. What we show must match: model
steps are the agent's model events, ``critic`` steps the scorers' (with the grader's
text and the scorer's verdict), every call's tokens counted once, and the run's output
the sample's answer -- never the grader's verdict (11 ``.eval`` logs from inspect_ai
0.3.41 to 0.3.208 and one ``--log-format json`` log).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loom_core.formats.inspect_eval import each_sample
from loom_core.formats.loader import load
from loom_core.views.summary import usage_and_cost
from tests.core.formats.real_world import FILES, real_files

LOGS = real_files("inspect", ".eval", ".json")
if not LOGS:
    pytest.skip(f"no real-world files beside the repository ({FILES})", allow_module_level=True)
PRODUCER = Path(__file__).parents[2] / "inspect_producer.py"


@pytest.fixture(scope="module")
def facts() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(PRODUCER), "--facts", *map(str, LOGS)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_the_corpus_is_all_there() -> None:
    assert len(LOGS) == 12 and sum(p.suffix == ".json" for p in LOGS) == 1


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name.split("__")[-1][:40])
def test_each_sample_reads_as_inspect_reads_it(log: Path, facts: dict[str, Any]) -> None:
    mine = facts[str(log)]
    seen = []
    for doc in each_sample(log.read_bytes(), str(log)):
        key = f"{doc.extra['sample']['id']}:{doc.extra['sample']['epoch']}"
        seen.append(key)
        want = mine[key]
        kinds = [e.kind for e in doc.effects]
        graded = want["scorer_calls"]
        assert kinds.count("model") == want["model_calls"] - len(graded), key
        critics = [doc.result(i) for i, k in enumerate(kinds) if k == "critic"]
        assert [c["critique"] for c in critics] == graded, key
        tools = sorted(k.removeprefix("tool:") for k in kinds if k.startswith("tool:"))
        assert tools == sorted(want["tool_calls"]), key
        assert usage_and_cost(doc)[:2] == (want["input_tokens"], want["output_tokens"]), key
        assert doc.header.output == want["output"], key  # the answer, not a verdict
        assert sorted({e.depth for e in doc.effects}) == (want["depths"] or [0]), key
        if critics:  # the scorer's verdict beside its grading call
            (scorer, value), *_ = want["scores"].items()
            assert critics[-1].get("value", critics[-1]["score"]) == value, key
            last = max(i for i, k in enumerate(kinds) if k == "critic")
            assert doc.effects[last].meta.agent == scorer
    assert seen == mine["order"]  # every sample, in inspect's order


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name.split("__")[-1][:40])
def test_the_samples_tokens_add_up_to_the_logs_stats(log: Path, facts: dict[str, Any]) -> None:
    """inspect's ``stats.model_usage`` counts the grader's calls too; so do we."""
    totals = [usage_and_cost(doc)[:2] for doc in each_sample(log.read_bytes(), str(log))]
    stats = facts[str(log)]["stats"].values()
    assert sum(t[0] for t in totals) == sum(s[0] for s in stats)
    assert sum(t[1] for t in totals) == sum(s[1] for s in stats)


def test_117_samples_of_three_logs_had_a_graders_verdict_for_output(
    facts: dict[str, Any],
) -> None:
    """The issue's count: every sample of the three logs with a model-graded scorer."""
    graded = [
        key
        for log in LOGS
        for key in facts[str(log)]["order"]
        if facts[str(log)][key]["scorer_calls"]
    ]
    assert len(graded) == 117


def test_a_json_log_opens_like_an_eval_log() -> None:
    (log,) = [p for p in LOGS if p.suffix == ".json"]
    doc = load(log)
    assert doc.format == "inspect"
    assert doc.header.model == "openai/gpt-4o-mini"
    # gpt-4o-mini: $0.15 in, $0.075 cached in, $0.60 out per million; this 0.3.95 log's
    # input counts include the 9,088 cached tokens (its totals are input + output)
    assert usage_and_cost(doc)[2] == pytest.approx(
        ((15235 - 9088) * 0.15 + 9088 * 0.075 + 281 * 0.6) / 1e6
    )


# the corpus README's figures: samples, model events, tool events per log
README_FIGURES = {
    "log_streaming.eval": (4, 4, 0),  # 2 samples x 2 epochs
    "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval": (10, 10, 0),
    "2025-09-23T08-09-58-04-00_security-guide_LuxZJVwvymC3S3SyoJczxB.eval": (16, 32, 0),
    "2025-09-23T08-09-58-04-00_theory-of-mind_bbB4eRCx2rFJLyPH42Cj9r.eval": (100, 200, 0),
    "log_message_deduplication.eval": (1, 6, 5),
    "retry-2-then-success.eval": (1, 3, 0),  # two failed tries, then the call that worked
    "2025-05-12T20-27-36-04-00_browser.json": (1, 5, 4),
}


@pytest.mark.parametrize("name", README_FIGURES)
def test_the_readmes_figures_are_what_inspect_and_we_say(name: str, facts: dict[str, Any]) -> None:
    """Pinned, so a slip shared by inspect's reading and ours cannot hide (scorer calls
    are model events, as ``stats.model_usage`` counts them)."""
    (log,) = [p for p in LOGS if p.name.endswith("__" + name)]
    mine = facts[str(log)]
    samples = [mine[key] for key in mine["order"]]
    events = sum(s["model_calls"] for s in samples), sum(len(s["tool_calls"]) for s in samples)
    assert (len(samples), *events) == README_FIGURES[name]
    docs = list(each_sample(log.read_bytes(), str(log)))
    kinds = [e.kind for doc in docs for e in doc.effects]
    shown = kinds.count("model") + kinds.count("critic"), sum(k.startswith("tool:") for k in kinds)
    assert (len(docs), *shown) == README_FIGURES[name]


def test_the_json_logs_events_counted_in_its_json() -> None:
    """The ``--log-format json`` log's events, counted by walking its JSON alone."""
    (log,) = [p for p in LOGS if p.suffix == ".json"]
    (sample,) = json.loads(log.read_text(encoding="utf-8"))["samples"]
    models = [e for e in sample["events"] if e["event"] == "model"]
    tools = [e for e in sample["events"] if e["event"] == "tool"]
    (doc,) = each_sample(log.read_bytes(), str(log))
    kinds = [e.kind for e in doc.effects]
    assert (
        (kinds.count("model"), sum(k.startswith("tool:") for k in kinds))
        == (
            len(models),
            len(tools),
        )
        == (5, 4)
    )
    usage = [m["output"]["usage"] for m in models]
    assert usage_and_cost(doc)[:2] == (
        sum(u["input_tokens"] for u in usage),
        sum(u["output_tokens"] for u in usage),
    )
    # no ``completion`` stored in this 0.3.95 log: the answer is the first choice's text
    assert "completion" not in sample["output"]
    assert doc.header.output == sample["output"]["choices"][0]["message"]["content"]
