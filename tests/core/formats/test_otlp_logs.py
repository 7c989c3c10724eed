"""GenAI content written as OTLP log records reads as the calls' content (issue 22, item 2).

OpenLLMetry in event mode (``use_legacy_attributes=False``) puts every prompt and
completion in a log record; its spans keep only the tokens. Its OpenAI instrumentation
emits them with the call's span current (a streamed reply's choice without it), its
Anthropic one never makes its span current: joined by ids where they have them, by time
where not. Facts: the fake upstream's calls, billed tokens and received messages; the
tools the agent ran; its final answer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loom_core.errors import LoadError
from loom_core.formats.loader import load
from loom_core.views.run_cost import token_usage
from tests.core.clis import core
from tests.core.formats.otlp_agents import SCRIPT, Recorded, seen_by_reader, sent
from tests.core.formats.otlp_event_mode import LAYOUTS, run_event_mode
from tests.core.live.otlp_helpers import post, running_receiver

FINAL = "Booked Hotel Storchen ✓"


def _texts(messages: list[tuple[str, str, tuple[str, ...], str]]) -> list[tuple[str, str]]:
    """(role, text): OpenLLMetry's events drop a tool result's call id."""
    return [(role, text) for role, text, _, _ in messages]


def _check(path: Path, rec: Recorded) -> None:
    doc = load(path)
    assert not doc.warnings
    kinds = [e.kind for e in doc.effects]
    assert kinds == ["model", "tool:search", "tool:search", "model", "tool:book", "model"]
    assert [k for k in kinds if k.startswith("tool:")] == [f"tool:{n}" for _, n in rec.tool_calls]
    models = [i for i, k in enumerate(kinds) if k == "model"]
    assert len(models) == len(rec.requests)
    totals = [token_usage(doc.result(i)["usage"]) for i in models]
    billed = SCRIPT[: len(rec.requests)]
    assert sum(t.input for t in totals) == sum(r.usage[0] for r in billed)
    assert sum(t.output for t in totals) == sum(r.usage[1] for r in billed)
    assert doc.extra["content_recorded"] is True
    for i, body in zip(models, rec.requests, strict=True):
        assert _texts(seen_by_reader(doc.extra["inputs"][i])) == _texts(sent(body))
    assert [c["id"] for c in doc.result(models[0])["tool_calls"]] == ["call_a", "call_b"]
    assert doc.result(2) == "Schweizerhof"  # untraced: recovered from the next call's input
    assert doc.result(models[-1])["text"] == FINAL
    summary = json.loads(core("summary", path, "--json").stdout)
    assert summary["output"] == FINAL


@pytest.fixture(scope="module")
def openai_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recorded]:
    """The OpenAI agent's event-mode files, made once (a child process with the
    instrumentation: about 5 s); tests that only read them take a copy."""
    folder = tmp_path_factory.mktemp("openllmetry-openai")
    return folder, run_event_mode("openllmetry-openai", folder)


def _copy(made: tuple[Path, Recorded], folder: Path) -> Recorded:
    shutil.copytree(made[0], folder, dirs_exist_ok=True)
    return made[1]


@pytest.mark.xdist_group("openllmetry-openai")  # one worker makes the shared run
@pytest.mark.parametrize(
    ("instrumentation", "stream"),
    [("openllmetry-openai", False), ("openllmetry-openai", True), ("openllmetry-anthropic", False)],
)
def test_openllmetry_event_mode_in_every_layout(
    instrumentation: str, stream: bool, tmp_path: Path, openai_run: tuple[Path, Recorded]
) -> None:
    if (instrumentation, stream) == ("openllmetry-openai", False):
        rec = _copy(openai_run, tmp_path)
    else:
        rec = run_event_mode(instrumentation, tmp_path, stream)
    for name in LAYOUTS.values():
        _check(tmp_path / name, rec)


@pytest.mark.xdist_group("openllmetry-openai")
def test_a_logs_file_alone_says_where_its_spans_are(
    tmp_path: Path, openai_run: tuple[Path, Recorded]
) -> None:
    _copy(openai_run, tmp_path)
    with pytest.raises(LoadError, match="OpenTelemetry logs, no spans"):
        load(tmp_path / "lines.logs.otlp.jsonl")
    (tmp_path / "lines.logs.otlp.jsonl").unlink()  # without its logs: steps and tokens only
    doc = load(tmp_path / "lines.otlp.jsonl")
    assert [e.kind for e in doc.effects].count("model") == 3
    assert doc.extra["content_recorded"] is False


@pytest.mark.parametrize(
    ("instrumentation", "root"),
    [("openllmetry-openai", True), ("openllmetry-anthropic", False)],
)
def test_the_receiver_takes_the_logs_and_files_them_with_their_spans(
    instrumentation: str, root: bool, tmp_path: Path
) -> None:
    """The SDK's OTLP/HTTP exporters send each record as it ends: the log records of a call
    arrive before its span (and, from OpenLLMetry's Anthropic instrumentation, with no
    trace id at all; there, with no agent span, every call is a trace of its own)."""
    save = tmp_path / "received"
    with running_receiver(save) as thread:
        assert thread.receiver is not None
        rec = run_event_mode(
            instrumentation, tmp_path, endpoint=thread.receiver.endpoint, root=root
        )
    runs = sorted(save.glob("*.otlp.jsonl"))
    assert [p.name for p in runs if ".logs." in p.name] == []  # nothing left waiting
    assert len(runs) == 1
    _check(runs[0], rec)


@pytest.mark.xdist_group("openllmetry-openai")
def test_the_receiver_takes_json_logs_too(
    tmp_path: Path, openai_run: tuple[Path, Recorded]
) -> None:
    """The same run posted as OTLP/JSON, every log record before any span; a logs body that
    is not one is answered 400 with the cause, as for traces."""
    rec = _copy(openai_run, tmp_path)
    save = tmp_path / "received"
    with running_receiver(save) as thread:
        assert thread.receiver is not None
        url = thread.receiver.endpoint
        for name, path in (
            ("lines.logs.otlp.jsonl", "/v1/logs"),
            ("lines.otlp.jsonl", "/v1/traces"),
        ):
            for line in (tmp_path / name).read_text().splitlines():
                status, _, answer = post(url + path, line.encode(), "application/json")
                assert status == 200, answer
        status, _, answer = post(url + "/v1/logs", b'{"resourceLogs": 5}', "application/json")
        assert status == 400 and b"resourceLogs is not a list" in answer
    (run,) = save.glob("*.otlp.jsonl")
    _check(run, rec)
