"""``python -m loom_core steps``: the step list on the command line, numbered by seq.

The numbers are loom-harness's: every step line carries the seq ``loom timeline``
prints in brackets for the same effect; user prompt rows carry none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from loom_core.formats.loader import load
from loom_core.views.steps import effect_index, step_label, step_of_seq, step_seq
from loom_core.views.timeline import build_timeline
from tests.core.clis import core, loom

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"


def test_steps_text_numbers_rows_as_loom_timeline_does() -> None:
    done = core("steps", SAMPLE)
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) == 30  # 28 effects and 2 user prompts, as the app lists them
    ours = [int(m.group(1)) for line in lines if (m := re.match(r"\[\s*(\d+)\]", line))]
    theirs = [
        int(m.group(1))
        for line in loom("timeline", SAMPLE).stdout.splitlines()
        if (m := re.match(r"\s*\[\s*(\d+)\]", line))
    ]
    assert ours == theirs == list(range(28))
    assert lines[0].startswith("[    ] prompt") and lines[24].startswith("[    ] prompt")
    assert re.match(r"\[  14\] model +lead +3,337 tok +\$0\.0118  calls reviewer", lines[15])
    assert re.match(r"\[  15\]   model +reviewer", lines[16])  # depth indents the kind
    assert "⊘ BLOCKED: git_push" in lines[22] and "✖ ERROR" in lines[5]
    # a denial has one sign: ◆ on its row and on the decision (★ is any other decision)
    assert "◆ calls run_tests" in lines[13] and "◆ deny run_shell(" in lines[13]
    assert "★" not in lines[13]


def test_steps_json_one_object_per_row() -> None:
    done = core("steps", SAMPLE, "--json")
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["row"] for r in rows] == list(range(30))
    assert rows[0]["seq"] is None and rows[0]["kind"] == "prompt" and rows[0]["agent"] == "user"
    r = rows[15]
    assert (r["seq"], r["kind"], r["depth"], r["agent"], r["tokens"]) == (
        14,
        "model",
        0,
        "lead",
        3337,
    )
    assert r["cost"] > 0 and r["flags"] == [] and r["summary"].startswith("calls reviewer(")
    assert rows[16]["depth"] == 1 and rows[16]["agent"] == "reviewer"
    denied = rows[13]
    assert denied["seq"] == 12 and denied["flags"] == ["shield", "denied"]
    [decision] = denied["shield"]
    assert (decision["index"], decision["action"], decision["tool"]) == (0, "deny", "run_shell")
    assert rows[22]["flags"] == ["blocked"] and rows[5]["flags"] == ["error"]


def test_seq_helpers_map_rows_and_seqs_both_ways() -> None:
    tl = build_timeline(load(SAMPLE))
    for row in range(len(tl)):
        seq = step_seq(tl, row)
        assert (seq is None) == (tl.effect_of[row] < 0)
        if seq is not None:
            assert step_of_seq(tl, seq) == row and step_label(tl, row) == f"step {seq}"
    assert step_label(tl, 0) == "prompt" and step_of_seq(tl, 28) is None
    assert step_of_seq(tl, -1) is None


def test_odd_seqs_read_as_loom_harness_reads_them(tmp_path: Path) -> None:
    """A missing ``seq`` is 0 (loom-harness's reader default); a null one is the position."""
    path = tmp_path / "odd.loom.json"
    path.write_text(
        json.dumps(
            {
                "prompt": "p",
                "output": "",
                "log": [
                    {"kind": "model", "result": {"text": "a"}},
                    {"seq": None, "kind": "model"},
                    {"seq": 7, "kind": "model"},
                ],
            }
        )
    )
    doc = load(path)
    assert [effect_index(doc.effects, s) for s in (0, 1, 7, 2)] == [0, 1, 2, None]
    rows = [json.loads(line) for line in core("steps", path, "--json").stdout.splitlines()]
    assert [r["seq"] for r in rows] == [None, 0, 1, 7]
    lines = core("summary", path).stdout.splitlines()[1:5]
    numbers = [line.split("]")[0].strip("[ !") for line in lines]
    assert numbers == ["", "0", "1", "7"]  # summary's timeline numbers steps the same way
