"""Our first divergence and verdict agree with loom-harness's ``loom diff`` (the oracle).

loom's diff is positional (loom-format.md §10.4); ours aligns, but pairs the
common prefix by position, so the first divergence must be at the same step,
with the same status whenever the steps there still have the same kind. Checked
on traces loom-harness recorded and on copies of them edited one way each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loom_core.diff import IDENTICAL, KINDS, ONLY_A, ONLY_B, compare
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict
from tests.core.clis import loom
from tests.core.harness_runs import Recorded

_STEP = re.compile(r"^\s*step (\d+) \[([a-z-]+)\]", re.M)

PAIRS = [
    ("tools", "tools"),
    ("big", "big"),
    ("paused", "resumed"),
    ("resumed", "paused"),
    ("paused_child", "resumed_child"),
    ("budget", "max_steps"),
    ("tools", "subagent"),
    ("fork", "tools"),
    ("policy", "dry_run"),
    ("unicode", "compaction"),
]


def loom_verdict(a: Path, b: Path) -> tuple[int, int | None, str | None]:
    """(exit code, first divergence step, its status) from ``loom diff A B``."""
    out = loom("diff", a, b)
    assert out.returncode in (0, 1), out.stderr
    found = _STEP.search(out.stdout)
    if out.returncode == 0:
        assert found is None and "identical" in out.stdout
        return 0, None, None
    assert found is not None, out.stdout
    return 1, int(found.group(1)), found.group(2)


def assert_agrees(a: Path, b: Path) -> None:
    code, step, status = loom_verdict(a, b)
    diff = compare(load(a), load(b))
    assert (0 if diff.identical else 1) == code
    if code == 0:
        assert all(r.status == IDENTICAL for r in diff.rows)
        return
    first = diff.first_divergence
    assert first is not None
    assert diff.identical_prefix == step
    assert {s for s in (first.a_seq, first.b_seq) if s is not None} == {step}
    if status not in (KINDS, ONLY_A, ONLY_B):
        assert first.status == status


@pytest.mark.parametrize(("name_a", "name_b"), PAIRS)
def test_agrees_on_harness_traces(
    harness_traces: dict[str, Recorded], name_a: str, name_b: str
) -> None:
    assert_agrees(harness_traces[name_a].path, harness_traces[name_b].path)


def _index_of(log: list[dict[str, Any]], kind: str, nth: int = 0) -> int:
    return [k for k, e in enumerate(log) if e["kind"] == kind][nth]


def _tool_result(log: list[dict[str, Any]]) -> None:
    log[_index_of(log, "tool:read_file")]["result"] = "contents of b.txt"


def _tool_key(log: list[dict[str, Any]]) -> None:
    log[_index_of(log, "tool:triple")]["key"] = "0123456789ab"


def _model_text(log: list[dict[str, Any]]) -> None:
    log[_index_of(log, "model", 1)]["result"]["text"] = "Something else entirely."


def _drop_step(log: list[dict[str, Any]]) -> None:
    del log[_index_of(log, "tool:explode")]


def _insert_step(log: list[dict[str, Any]]) -> None:
    k = _index_of(log, "tool:triple")
    log.insert(k, dict(log[k], kind="tool:extra", result="extra"))


def _rename_kind(log: list[dict[str, Any]]) -> None:
    log[_index_of(log, "tool:stats")]["kind"] = "tool:stats2"


def _int_as_float(log: list[dict[str, Any]]) -> None:
    k = _index_of(log, "tool:triple")
    assert log[k]["result"] == 27
    log[k]["result"] = 27.0


def _append_step(log: list[dict[str, Any]]) -> None:
    log.append(
        dict(
            log[-1],
            result={"text": "one more", "tool_calls": [], "stop_reason": "end_turn", "usage": {}},
        )
    )


EDITS: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    "tool_result": _tool_result,
    "tool_key": _tool_key,
    "model_text": _model_text,
    "drop_step": _drop_step,
    "insert_step": _insert_step,
    "rename_kind": _rename_kind,
    "int_as_float": _int_as_float,
    "append_step": _append_step,
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_agrees_on_edited_traces(
    harness_traces: dict[str, Recorded], tmp_path: Path, edit: str
) -> None:
    source = harness_traces["tools"].path
    data = json.loads(source.read_text())
    EDITS[edit](data["log"])
    for seq, entry in enumerate(data["log"]):
        entry["seq"] = seq
    edited = tmp_path / f"{edit}.loom.json"
    save_dict(data, edited)
    assert_agrees(source, edited)
    assert_agrees(edited, source)
