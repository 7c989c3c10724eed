"""``diff`` across formats: a Claude Code run and an OpenTelemetry run of the same task.

The OTel run comes from a real producer (OpenInference around the real ``openai`` client,
against the fake upstream); the Claude Code transcript holds the same conversation with
its own ids (tests/core/diff/same_task.py). The same tool calls must pair up as the same
step and the runs diverge exactly where they differ, not at every id.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loom_core.diff import IDENTICAL, INPUTS, ONLY_A, RESULTS, compare, pair_detail
from loom_core.formats.loader import load
from tests.core.clis import core
from tests.core.diff.same_task import claude_run, otel_run
from tests.core.diff.tracegen import basic_run, write
from tests.core.formats.claude_fixtures import Session, text, tool_use
from tests.core.formats.otlp_agents import PROMPT, Recorded


@pytest.fixture(scope="module")
def otel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recorded]:
    return otel_run(tmp_path_factory.mktemp("otel"))


def test_the_same_task_is_the_same_run(otel: tuple[Path, Recorded], tmp_path: Path) -> None:
    path, rec = otel
    claude = claude_run(tmp_path)
    done = core("diff", claude, path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[:2] == [
        "compared by what each step did (claude-code vs otlp: ids and usage aside)",
        "runs are identical (6 step(s))",
    ]
    report = json.loads(core("diff", claude, path, "--json").stdout)
    assert report["by_substance"] is True and report["identical"] is True
    assert [(r["a"], r["b"]) for r in report["rows"]] == [(i, i) for i in range(6)]
    tokens = sum(u[0] for u in rec.usage), sum(u[1] for u in rec.usage)
    for side in ("a", "b"):  # both read the usage the upstream sent
        assert (
            report["totals"][side]["input_tokens"],
            report["totals"][side]["output_tokens"],
        ) == (tokens)


def test_they_diverge_where_the_runs_differ(otel: tuple[Path, Recorded], tmp_path: Path) -> None:
    path, _ = otel
    claude = claude_run(tmp_path, hotel="Widder")
    diff = compare(load(claude), load(path))
    kinds = [diff.a.effects[r.a].kind for r in diff.rows if r.a is not None]
    search, book = "tool:mcp__travel__search", "tool:mcp__travel__book"  # Claude Code's names
    assert kinds == ["model", search, search, "model", book, "model"]
    assert [(r.a, r.b, r.status) for r in diff.rows] == [
        (0, 0, IDENTICAL),  # the two searches, asked with other ids
        (1, 1, IDENTICAL),
        (2, 2, IDENTICAL),  # the OTel side's untraced tool, read from the next call's input
        (3, 3, RESULTS),  # asks to book another hotel
        (4, 4, INPUTS),  # so the booking had other arguments
        (5, 5, RESULTS),
    ]
    detail = pair_detail(diff, 3)
    assert [(c.path, c.old, c.new) for c in detail.args_diff] == [
        ("$.tool_calls[0].args.hotel", "Widder", "Storchen")
    ]
    assert detail.result_diff == []  # no id or usage noise
    done = core("diff", claude, path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "identical prefix: 3 step(s)" in lines
    assert "  a step 3 · b step 3 [results-differ]" in lines
    assert any(ln.startswith("    args: $.tool_calls[0].args.hotel") for ln in lines), lines


def test_a_converted_run_compares_alike(otel: tuple[Path, Recorded], tmp_path: Path) -> None:
    """convert turns the transcript into a loom trace; against the OTel run it is still the
    same run (one side foreign is enough to compare by substance)."""
    path, _ = otel
    out = tmp_path / "claude.loom.json"
    assert core("convert", claude_run(tmp_path), "-o", out).returncode == 0
    diff = compare(load(out), load(path))
    assert diff.by_substance and diff.identical


def test_two_loom_runs_keep_loom_harness_statuses(tmp_path: Path) -> None:
    a = write(tmp_path / "a.loom.json", basic_run())
    diff = compare(load(a), load(a))
    assert not diff.by_substance and diff.identical
    assert "compared by" not in core("diff", a, a).stdout


def test_an_extra_call_on_one_side_is_its_own_row(
    otel: tuple[Path, Recorded], tmp_path: Path
) -> None:
    """Claude Code searched Basel between the two searches the OTel run made: Basel is only in
    A, and Bern still pairs with Bern (tool steps align by their arguments too)."""
    path, _ = otel
    s = Session()
    s.prompt(PROMPT)
    cities = ("Zürich", "Basel", "Bern")
    s.reply(
        [tool_use(f"toolu_{c}", "mcp__travel__search", city=c) for c in cities],
        usage=(80, 20, 0, 0),
    )
    found = ("Storchen, Widder", "Les Trois Rois", "Schweizerhof")
    for city, hotels in zip(cities, found, strict=True):
        s.result(f"toolu_{city}", hotels)
    s.reply([tool_use("toolu_b", "mcp__travel__book", hotel="Storchen")], usage=(130, 15, 0, 0))
    s.result("toolu_b", "booking #42")
    s.reply([text("Booked Hotel Storchen ✓")], usage=(170, 9, 0, 0))
    diff = compare(load(s.write(tmp_path / "extra.jsonl")), load(path))
    assert [(r.a, r.b, r.status) for r in diff.rows] == [
        (0, 0, RESULTS),  # asked for one more search
        (1, 1, IDENTICAL),
        (2, None, ONLY_A),  # Basel
        (3, 2, IDENTICAL),  # Bern with Bern
        (4, 3, IDENTICAL),
        (5, 4, IDENTICAL),
        (6, 5, IDENTICAL),
    ]
