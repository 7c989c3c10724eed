"""compare() and pair_detail() on runs that differ in one chosen way."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from loom_core.diff import (
    IDENTICAL,
    INPUTS,
    KINDS,
    ONLY_A,
    ONLY_B,
    RESULTS,
    Change,
    changed_words,
    compare,
    pair_detail,
)
from loom_core.formats.loader import load
from tests.core.diff.tracegen import basic_run, model, pair, tool, write


def test_identical_runs(tmp_path: Path) -> None:
    _, _, a, b = pair(tmp_path, basic_run(), basic_run())
    diff = compare(a, b)
    assert diff.identical and diff.first_divergence is None
    assert diff.identical_prefix == len(diff.rows) == 5
    assert [r.status for r in diff.rows] == [IDENTICAL] * 5
    assert diff.totals.statuses == {IDENTICAL: 5}
    d = diff.totals.delta
    assert (d.input_tokens, d.output_tokens, d.cost) == (0, 0, 0.0)


def test_inserted_tool_step_aligns_the_rest(tmp_path: Path) -> None:
    b = basic_run()
    b.insert(2, tool("read_file", "contents of b.txt", "c9", {"path": "b.txt"}))
    _, _, da, db = pair(tmp_path, basic_run(), b)
    diff = compare(da, db)
    assert [(r.a, r.b, r.status) for r in diff.rows] == [
        (0, 0, IDENTICAL),
        (1, 1, IDENTICAL),
        (None, 2, ONLY_B),
        (2, 3, IDENTICAL),
        (3, 4, IDENTICAL),
        (4, 5, IDENTICAL),
    ]
    first = diff.first_divergence
    assert first is not None and (first.status, first.a_seq, first.b_seq) == (ONLY_B, None, 2)
    assert diff.identical_prefix == 2
    assert diff.totals.statuses == {IDENTICAL: 5, ONLY_B: 1}


def test_dropped_and_replaced_steps(tmp_path: Path) -> None:
    b = basic_run()
    del b[1]  # the read_file result is gone
    b[2] = tool("grep", "no hits", "c2", {"query": "answer"})  # search became grep
    _, _, da, db = pair(tmp_path, basic_run(), b)
    rows = [(r.a, r.b, r.status) for r in compare(da, db).rows]
    assert rows == [
        (0, 0, IDENTICAL),
        (1, None, ONLY_A),
        (2, 1, IDENTICAL),
        (3, 2, KINDS),
        (4, 3, IDENTICAL),
    ]


def test_changed_model_text_is_a_word_diff(tmp_path: Path) -> None:
    b = basic_run()
    b[4]["result"] = {**b[4]["result"], "text": "The answer is 43 for sure."}
    _, _, da, db = pair(tmp_path, basic_run(), b)
    diff = compare(da, db)
    assert [r.status for r in diff.rows] == [IDENTICAL] * 4 + [RESULTS]
    first = diff.first_divergence
    assert first is not None and (first.row, first.a_seq, first.b_seq) == (4, 4, 4)
    detail = pair_detail(diff, first.row)
    assert (detail.a_text, detail.b_text) == (
        "The answer is 42 for sure.",
        "The answer is 43 for sure.",
    )
    assert changed_words(detail.text_diff) == (["42"], ["43"])
    assert "".join(op.a for op in detail.text_diff) == detail.a_text
    assert "".join(op.b for op in detail.text_diff) == detail.b_text
    assert Change("$.text", "changed", detail.a_text, detail.b_text) in detail.result_diff


def test_changed_tool_arguments_show_paths(tmp_path: Path) -> None:
    b = basic_run()
    b[0] = model("Let me read it.", [("c1", "read_file", {"path": "b.txt"})], 1000, 100, n=0)
    b[1] = tool("read_file", "contents of b.txt", "c1", {"path": "b.txt"})
    _, _, da, db = pair(tmp_path, basic_run(), b)
    diff = compare(da, db)
    assert [r.status for r in diff.rows][:2] == [RESULTS, INPUTS]
    model_detail = pair_detail(diff, 0)
    assert model_detail.args_diff == [
        Change("$.tool_calls[0].args.path", "changed", "a.txt", "b.txt")
    ]
    tool_detail = pair_detail(diff, diff.rows[1])
    assert (tool_detail.a_args, tool_detail.b_args) == (
        {"args": {"path": "a.txt"}},
        {"args": {"path": "b.txt"}},
    )
    assert tool_detail.args_diff == [Change("$.args.path", "changed", "a.txt", "b.txt")]
    assert changed_words(tool_detail.text_diff) == (["a"], ["b"])


def test_json_tool_results_diff_structurally(tmp_path: Path) -> None:
    b = basic_run()
    b[3] = tool(
        "search",
        '{"hits": [1, 7, 2], "total": 3, "more": true}',
        "c2",
        {"query": "answer", "limit": 5},
    )
    _, _, da, db = pair(tmp_path, basic_run(), b)
    diff = compare(da, db)
    assert diff.rows[3].status == RESULTS
    detail = pair_detail(diff, 3)
    assert detail.result_diff == [
        Change("$.hits[1]", "added", new=7),
        Change("$.total", "changed", 2, 3),
        Change("$.more", "added", new=True),
    ]
    assert detail.args_diff == []


def test_numbers_equal_in_python_are_identical(tmp_path: Path) -> None:
    a, b = basic_run(), basic_run()
    a[1]["result"], b[1]["result"] = {"n": 1, "r": [2.0]}, {"r": [2], "n": 1.0}
    _, _, da, db = pair(tmp_path, a, b)
    assert compare(da, db).identical


def test_token_and_cost_deltas(tmp_path: Path) -> None:
    b = basic_run()
    b[2] = model("Now search.", [("c2", "search", {"query": "answer", "limit": 5})], 1500, 90, n=1)
    _, _, da, db = pair(tmp_path, basic_run(), b)
    diff = compare(da, db)
    ta, tb = diff.totals.a, diff.totals.b
    assert (ta.input_tokens, ta.output_tokens, tb.input_tokens, tb.output_tokens) == (
        3700,
        170,
        4000,
        210,
    )
    # claude-sonnet-4-5: $3 in / $15 out per million tokens
    assert ta.cost == pytest.approx((3700 * 3 + 170 * 15) / 1e6)
    assert tb.cost == pytest.approx((4000 * 3 + 210 * 15) / 1e6)
    delta = diff.totals.delta
    assert (delta.input_tokens, delta.output_tokens) == (300, 40)
    assert delta.cost == pytest.approx((300 * 3 + 40 * 15) / 1e6)
    row = diff.row_delta(2)
    assert (row.input_tokens, row.output_tokens) == (300, 40)
    assert row.cost == pytest.approx((300 * 3 + 40 * 15) / 1e6)
    assert diff.row_delta(1).cost == 0.0 and diff.row_delta(1).input_tokens == 0


def test_only_rows_count_their_own_tokens(tmp_path: Path) -> None:
    b = basic_run() + [model("One more thing.", [], 700, 30, n=3)]
    _, _, da, db = pair(tmp_path, basic_run(), b)
    diff = compare(da, db)
    assert diff.rows[-1].status == ONLY_B
    assert (diff.row_delta(-1).input_tokens, diff.row_delta(-1).output_tokens) == (700, 30)


def test_unpriced_model_has_unknown_cost(tmp_path: Path) -> None:
    _, _, da, db = pair(tmp_path, basic_run(), basic_run(), model_id="no-such-model-9")
    diff = compare(da, db)
    assert diff.totals.a.cost is None and diff.totals.delta.cost is None
    assert diff.row_delta(0).cost is None
    assert diff.totals.a.input_tokens == 3700


def test_proxy_tool_args_pair_by_tuid(tmp_path: Path) -> None:
    def run(path: str) -> list[dict]:
        effects = [model("", [("tu_1", "read", {"path": "x"}), ("tu_2", "read", {"path": path})])]
        effects += [tool("read", "one", "tu_1", {}), tool("read", "two", "tu_2", {})]
        effects[1]["meta"], effects[2]["meta"] = {"tuid": "tu_1"}, {"tuid": "tu_2"}
        return effects

    pa, pb = write(tmp_path / "a.loom.json", run("y")), write(tmp_path / "b.loom.json", run("z"))
    for p in (pa, pb):  # mark as proxy recordings
        data = __import__("json").loads(p.read_text())
        data["recorded_via"] = "proxy"
        from loom_core.formats.save import save_dict

        save_dict(data, p)
    diff = compare(load(pa), load(pb))
    assert diff.a.is_proxy
    assert pair_detail(diff, 2).a_args == {"args": {"path": "y"}}
    assert pair_detail(diff, 2).args_diff == [Change("$.args.path", "changed", "y", "z")]
    assert pair_detail(diff, 1).args_diff == []


def test_harness_tool_args_pair_fifo_by_name(harness_traces: dict) -> None:
    doc = load(harness_traces["tools"].path)
    diff = compare(doc, doc)
    kinds = [e.kind for e in doc.effects]
    reads = [k for k, kind in enumerate(kinds) if kind == "tool:read_file"]
    args = [pair_detail(diff, k).a_args for k in reads]
    assert args == [{"args": {"path": "a.txt"}}, {"args": {"path": "missing.txt"}}]
    triple = kinds.index("tool:triple")
    assert pair_detail(diff, triple).a_args == {"args": {"n": 9}}


def test_only_rows_have_one_sided_details(tmp_path: Path) -> None:
    b = basic_run()
    b.insert(2, tool("read_file", "contents of b.txt", "c9", {"path": "b.txt"}))
    _, _, da, db = pair(tmp_path, basic_run(), b)
    detail = pair_detail(compare(da, db), 2)
    assert detail.a_text is None and detail.b_text == "contents of b.txt"
    assert [op.op for op in detail.text_diff] == ["insert"]
    assert detail.to_dict()["status"] == ONLY_B


def test_journal_equals_its_trace(tmp_path: Path) -> None:
    from tests.core.harness_runs import journal_complete

    journal, run = journal_complete(tmp_path)
    trace = tmp_path / "complete.loom.json"
    run.save(str(trace))
    diff = compare(load(journal), load(trace))
    assert load(journal).format == "journal"
    assert diff.identical and len(diff.rows) == len(run.log)


def test_report_is_json_ready(tmp_path: Path) -> None:
    import json

    b = copy.deepcopy(basic_run())
    b[4]["result"]["text"] = "Something else."
    _, _, da, db = pair(tmp_path, basic_run(), b)
    report = json.loads(json.dumps(compare(da, db).to_dict()))
    assert report["identical"] is False and report["identical_prefix"] == 4
    assert report["first_divergence"] == {"row": 4, "status": RESULTS, "a_seq": 4, "b_seq": 4}
    assert report["rows"][4] == {
        "a": 4,
        "b": 4,
        "status": RESULTS,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
    }
    assert report["totals"]["statuses"] == {IDENTICAL: 4, RESULTS: 1}


def test_wirelog_equals_its_converted_trace(tmp_path: Path) -> None:
    from loom_core.formats.save import save_document
    from tests.core.formats.test_wirelog import anthropic_exchanges, openai_exchanges, write_wirelog

    wirelog = write_wirelog(tmp_path / "a.wirelog", anthropic_exchanges())
    doc = load(wirelog)
    assert doc.format == "wirelog" and len(doc.effects) > 2
    trace = tmp_path / "a.loom.json"
    save_document(doc, trace)
    assert compare(doc, load(trace)).identical
    other = load(write_wirelog(tmp_path / "b.wirelog", openai_exchanges()))
    diff = compare(doc, other)
    assert not diff.identical and diff.totals.a.input_tokens > 0
    for k in range(len(diff.rows)):
        pair_detail(diff, k)  # every row's detail can be built
