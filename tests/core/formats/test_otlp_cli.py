"""OTLP files on the command line: ``convert`` to a loom trace loom-harness accepts,
``summary`` (text and ``--json``, the same keys as for a loom trace), one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.clis import core
from tests.core.formats.otlp_agents import Recorded, run_agent
from tests.core.formats.otlp_producers import write_jsonl
from tests.core.proxy.harness import loom_verifies


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recorded]:
    rec = run_agent("openinference-anthropic")
    path = tmp_path_factory.mktemp("otlp") / "agent.otlp.jsonl"
    return write_jsonl(path, [[s] for s in rec.spans]), rec


def test_convert_gives_a_trace_loom_harness_verifies(
    recorded: tuple[Path, Recorded], tmp_path: Path
) -> None:
    path, rec = recorded
    out = tmp_path / "agent.loom.json"
    done = core("convert", path, "-o", out)
    assert done.returncode == 0, done.stderr
    run = loom_verifies(out)
    models = [e for e in run.log if e.kind == "model"]
    assert len(models) == len(rec.requests)
    tools = [e.kind for e in run.log if e.kind.startswith("tool:")]
    assert tools == [f"tool:{name}" for _, name in rec.tool_calls]
    assert run.output == "Booked Hotel Storchen ✓"
    # the format by its name, as a noun: not "from an OpenTelemetry (OTLP)"
    assert done.stderr.strip().endswith("from an OpenTelemetry (OTLP) trace"), done.stderr
    again = core("convert", path, "-o", out)  # never overwritten unasked
    assert again.returncode == 2 and "--force" in again.stderr


def test_summary_json_has_the_keys_of_a_loom_trace(
    recorded: tuple[Path, Recorded], tmp_path: Path
) -> None:
    path, rec = recorded
    out = tmp_path / "agent.loom.json"
    assert core("convert", path, "-o", out).returncode == 0
    foreign = json.loads(core("summary", path, "--json").stdout)
    native = json.loads(core("summary", out, "--json").stdout)
    assert list(foreign) == list(native)
    assert foreign["format"] == "otlp"
    assert (foreign["input_tokens"], foreign["output_tokens"]) == rec.tokens
    assert foreign["effects"] == native["effects"] == len(rec.requests) + len(rec.tool_calls)
    text = core("summary", path)
    assert text.returncode == 0 and "tool:book" in text.stdout, text.stderr
    # the header names the format as the status bar does: OTLP has no "v2"
    assert text.stdout.startswith("OpenTelemetry (OTLP) trace  model: "), text.stdout[:80]
    assert core("summary", out).stdout.startswith("trace v2  model: ")


def test_a_broken_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.otlp.json"
    bad.write_text('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 5}]}]}]}')
    done = core("summary", bad)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "traceId" in done.stderr and str(bad) in done.stderr
