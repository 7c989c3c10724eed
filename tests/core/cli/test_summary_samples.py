"""``summary`` of a log of many samples says which one it shows, lists them all, and
``--sample all`` gives each one (one JSON object per line).

The facts are inspect's own (``tests/inspect_producer.py``: ``read_eval_log``); the list's
counts must also be what ``summary`` of each sample says, so a user never sees two numbers
for one sample.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.core.clis import core
from tests.core.formats.real_world import real_file
from tests.inspect_producer import eval_log, graded_log

MIND = "UKGovernmentBEIS__inspect_ai__2025-09-23T08-09-58-04-00_theory-of-mind_bbB4eRCx2rFJLyPH42Cj9r.eval"


def _facts(log: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(Path(str(log) + ".facts.json").read_text())
    return found


def _summary(*args: Any) -> Any:
    done = core("summary", "--json", *args)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("log", [eval_log, graded_log], ids=["tools", "graded"])
def test_the_json_lists_every_sample_with_inspects_numbers(log: Any) -> None:
    path = log()
    facts = _facts(path)
    (shown,) = _summary(path)
    assert [f"{s['id']}:{s['epoch']}" for s in shown["samples"]] == facts["order"]
    for entry in shown["samples"]:
        want = facts[f"{entry['id']}:{entry['epoch']}"]
        graded = len(want["scorer_calls"])
        assert entry["model_steps"] == want["model_calls"] - graded
        assert entry["scorer_steps"] == graded
        assert entry["tool_steps"] == len(want["tool_calls"])
        assert (entry["input_tokens"], entry["output_tokens"]) == (
            want["input_tokens"],
            want["output_tokens"],
        )
        assert entry["scores"] == want["scores"]
    assert shown["sample"] == shown["samples"][0]  # which one this summary is


def test_sample_all_gives_each_sample_and_agrees_with_the_list() -> None:
    (listed,) = _summary(eval_log())
    lines = _summary("--sample", "all", eval_log())
    assert [line["sample"] for line in lines] == listed["samples"]
    for line in lines:
        kinds = line["kinds"]
        assert line["sample"]["model_steps"] == kinds.count("model")
        assert line["sample"]["tool_steps"] == sum(k.startswith("tool:") for k in kinds)
        assert line["input_tokens"] == line["sample"]["input_tokens"]
        assert line["samples"] == []  # the lines are the list
    one = _summary("--sample", "a:2", eval_log())[0]
    assert one["sample"]["id"] == "a" and one["sample"]["epoch"] == 2
    assert {k: v for k, v in one.items() if k != "samples"} == {
        k: v for k, v in lines[3].items() if k != "samples"
    }


def test_a_real_log_of_100_samples_agrees_sample_by_sample() -> None:
    mind = real_file("inspect", MIND)
    (listed,) = _summary(mind)
    lines = _summary("--sample", "all", mind)
    assert len(lines) == len(listed["samples"]) == 100
    assert [line["sample"] for line in lines] == listed["samples"]
    for line in lines:
        assert line["kinds"] == ["model", "critic"]
        assert line["input_tokens"] == line["sample"]["input_tokens"]


def test_the_text_summary_names_its_sample() -> None:
    done = core("summary", eval_log())
    assert done.returncode == 0
    assert done.stdout.splitlines()[0].startswith("sample 7 · epoch 1 (4 samples: --sample")
    every = core("summary", "--sample", "all", eval_log())
    heads = [line for line in every.stdout.splitlines() if line.startswith("sample ")]
    assert [h.split(" (")[0] for h in heads] == [
        "sample 7 · epoch 1",
        "sample a · epoch 1",
        "sample 7 · epoch 2",
        "sample a · epoch 2",
    ]


def test_a_file_of_one_run_has_no_sample_and_all_is_refused_elsewhere(tmp_path: Path) -> None:
    trace = tmp_path / "t.loom.json"
    assert core("convert", eval_log(), "-o", trace).returncode == 0
    (facts,) = _summary(trace)
    assert facts["sample"] is None and facts["samples"] == []
    for done in (
        core("steps", "--sample", "all", eval_log()),
        core("summary", "--sample", "all", trace),
    ):
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
