"""The context walk reads a model result's usage and calls as the views read the result.

The walk decodes only the members it needs (usage, the calls' ids and names) and skips
the texts and a call's input; a result the views read as empty (§1.4: a member of the
wrong type) must still give no tokens and no calls, or a step's tokens would disagree
with what its context shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loom_core.formats.foreign import RunBuilder
from loom_core.formats.loader import load
from loom_core.views.context import build_context

CALL = {"id": "c1", "name": "read_file", "input": {"path": "a.py", "deep": [[1, {"x": None}]]}}
USAGE = {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 5}


def _trace(tmp_path: Path, result: dict[str, Any]) -> Path:
    run = RunBuilder(model="claude-sonnet-4-5", episodes=["do it"])
    run.add_model("look", [dict(CALL)], dict(USAGE))
    run.add_tool("read_file", "c1", "the file")
    trace = run.trace()
    trace["log"][0]["result"] = result
    trace.pop("checksum", None)
    path = tmp_path / "run.loom.json"
    path.write_text(json.dumps(trace))
    return path


def test_a_readable_result_counts_its_usage_and_pairs_its_call(tmp_path: Path) -> None:
    result = {"text": "look", "tool_calls": [CALL], "usage": USAGE, "extra": {"a": [1]}}
    doc = load(_trace(tmp_path, result))
    index = build_context(doc)
    assert (index.tokens_in[0], index.tokens_out[0], index.plain_usage[0]) == (120, 30, 0)
    assert dict(index.result_pairs) == {1: 0}
    assert doc.model_result(0).tool_calls[0].name == "read_file"


@pytest.mark.parametrize(
    "broken",
    [{"stop_reason": 5}, {"tool_calls": [3]}, {"tool_calls": [{"id": 7}]}, {"usage": "many"}],
)
def test_a_result_the_views_read_as_empty_gives_no_tokens_and_no_calls(
    tmp_path: Path, broken: dict[str, Any]
) -> None:
    result = {"text": "look", "tool_calls": [CALL], "usage": USAGE, **broken}
    doc = load(_trace(tmp_path, result))
    index = build_context(doc)
    assert doc.model_result(0).usage is None  # what the views read: an empty result
    assert (index.tokens_in[0], index.tokens_out[0]) == (0, 0)
    assert dict(index.result_pairs) == {}
