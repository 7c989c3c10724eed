"""Logs the current inspect-ai release writes, against what inspect reads back from them.

Two of ``tests/inspect_producer.py``'s logs: a task scored by ``model_graded_fact()``
(its grader, the same mock model, is called inside the ``scorers`` span and grades the
third answer wrong), and the tools task written with ``log_format="json"`` (what
``inspect eval --log-format json`` writes), which must read exactly as the same task's
``.eval`` log does. Facts are inspect's own (``read_eval_log``, ``stats.model_usage``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loom_core.errors import LoadError
from loom_core.formats import inspect_eval
from loom_core.formats.inspect_eval import each_sample, load_sample
from loom_core.formats.inspect_values import text_of
from loom_core.formats.loader import load, load_bytes
from loom_core.views.summary import usage_and_cost
from tests.core.clis import core
from tests.inspect_producer import eval_log, graded_log, json_log


def _facts(log: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(Path(str(log) + ".facts.json").read_text())
    return found


def test_a_graders_call_is_the_scorers_step_and_the_answer_is_the_output() -> None:
    log = graded_log()
    facts = _facts(log)
    totals = [0, 0]
    for doc in each_sample(log.read_bytes(), str(log)):
        want = facts[f"{doc.extra['sample']['id']}:{doc.extra['sample']['epoch']}"]
        kinds = [e.kind for e in doc.effects]
        assert kinds == ["model", "critic"]  # the answer, then its grading
        assert want["model_calls"] == 2 and len(want["scorer_calls"]) == 1
        critic = doc.result(1)
        assert critic["critique"] == want["scorer_calls"][0]
        assert critic["value"] == want["scores"]["model_graded_fact"]
        assert critic["score"] == {"C": 1.0, "I": 0.0}[critic["value"]]
        assert doc.effects[1].meta.agent == "model_graded_fact" and doc.effects[1].depth == 0
        assert doc.header.output == want["output"] != want["scorer_calls"][0]
        counted = usage_and_cost(doc)[:2]
        assert counted == (want["input_tokens"], want["output_tokens"])
        totals = [totals[0] + counted[0], totals[1] + counted[1]]
    assert totals == facts["stats"]["mockllm/model"]  # inspect counts the grader too


def test_the_grading_step_shows_what_the_grader_was_sent() -> None:
    log = graded_log()
    doc = load_sample(log.read_bytes(), str(log), "3")
    sent = doc.extra["inputs"][1]
    assert "GRADE" in json.dumps(sent) and "10-4" in json.dumps(sent)
    assert doc.extra["records"][1]["event"] == "model"
    assert doc.header.system == ""  # the grader's prompt is not the agent's system prompt


def test_a_grading_step_is_no_fork_point(tmp_path: Path) -> None:
    out = tmp_path / "one.loom.json"
    assert core("convert", graded_log(), "--sample", "1", "-o", out).returncode == 0
    done = core("fork", out, "--step", "1", "--inject", "x", "--dry-run")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert core("fork", out, "--step", "0", "--inject", "x", "--dry-run").returncode == 0


@pytest.mark.parametrize("key", ["7:1", "a:1", "7:2", "a:2"])
def test_a_json_log_reads_as_the_same_tasks_eval_log(key: str) -> None:
    sid, epoch = inspect_eval.parse_sample_spec(key)
    ours = load_sample(json_log().read_bytes(), str(json_log()), sid, epoch)
    theirs = load_sample(eval_log().read_bytes(), str(eval_log()), sid, epoch)
    assert [e.kind for e in ours.effects] == [e.kind for e in theirs.effects]
    assert _same(ours) == _same(theirs)  # every step, bar the ids inspect draws anew each run
    want = _facts(json_log())[key]
    assert usage_and_cost(ours)[:2] == (want["input_tokens"], want["output_tokens"])
    assert ours.header.output == want["output"]
    labels = [s["label"] for s in ours.extra["samples"]]
    assert labels == [s["label"] for s in theirs.extra["samples"]]


def _same(doc: Any) -> list[Any]:
    """What each step says, without the random ids of tool calls and messages."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("id", "tool_call_id")}
        return [strip(v) for v in value] if isinstance(value, list) else value

    models = [i for i, e in enumerate(doc.effects) if e.kind == "model"]
    sent = [
        [(m.get("role"), text_of(m.get("content"))) for m in doc.extra["inputs"][i]] for i in models
    ]
    return [strip(doc.result(i)) for i in range(len(doc.effects))] + sent


def test_a_json_log_opens_from_the_command_line_and_the_loader() -> None:
    log = json_log()
    doc = load(log)
    assert doc.format == "inspect"
    assert [f"{s['id']}:{s['epoch']}" for s in doc.extra["samples"]] == _facts(log)["order"]
    done = core("summary", "--json", "--sample", "a:2", log)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["format"] == "inspect"


def test_only_the_chosen_sample_of_a_json_log_is_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lazy: the others are stepped over for their labels, never walked; a broken one
    (valid JSON, not a sample) fails only when it is chosen, naming it."""
    data = json.loads(json_log().read_bytes())
    data["samples"][1]["events"] = "not a list"
    broken = data["samples"][1]
    spoilt = json.dumps(data).encode()
    walked: list[str] = []
    real = inspect_eval.walk
    monkeypatch.setattr(inspect_eval, "walk", lambda *a: walked.append(a[2]) or real(*a))
    doc = load_bytes(spoilt, "log.json")
    assert len(doc.effects) > 5 and len(walked) == 1
    with pytest.raises(LoadError, match=f"sample {broken['id']} epoch {broken['epoch']}"):
        load_sample(spoilt, "log.json", str(broken["id"]), broken["epoch"])


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        (b'{"version": 2, "status": "success", "eval": {}, "samples": []}', "holds no samples"),
        (b'{"version": 2, "status": "success", "eval": 5}', "not a readable Inspect AI JSON log"),
        (b'{"version": 2, "status": "success", "eval": {', "not a readable Inspect AI JSON log"),
    ],
)
def test_a_bad_json_log_is_a_load_error(text: bytes, cause: str) -> None:
    with pytest.raises(LoadError, match=cause):
        load_bytes(text, "bad.json")
