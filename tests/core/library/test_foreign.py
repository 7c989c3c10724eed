"""Runs other tools write are indexed through the same loader: OTLP exports and Claude Code
sessions, made by their real producers (the OpenInference instrumentation exporting the real
OpenAI SDK's calls) or built from the documented records (Claude Code has no producer
library).

Why: a watched folder (``~/.claude/projects``, the OTLP receiver's folder) holds these, and
a search for a tool argument must find them like any loom run. A Claude Code session's
sub-agent files are part of their session, not runs of their own, and a change to one
re-indexes the session.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from loom_core.library.index import Indexer
from loom_core.library.search import Library
from tests.core.formats.claude_fixtures import full_session
from tests.core.formats.otlp_agents import run_agent
from tests.core.formats.otlp_producers import write_jsonl, write_pb


def test_otlp_exports_are_runs_and_unrelated_json_is_not(tmp_path: Path) -> None:
    rec = run_agent("openinference-openai")
    folder = tmp_path / "otel"
    folder.mkdir()
    pb = write_pb(folder / "run.otlp.pb", rec.spans)
    jsonl = write_jsonl(folder / "export.jsonl", [[s] for s in rec.spans])  # no pattern: sniffed
    (folder / "package.json").write_text('{"name": "not-a-run"}')
    (folder / "notes.jsonl").write_text('{"a": 1}\n')
    indexer = Indexer()
    report = indexer.index_folder(folder)
    assert sorted(report.indexed) == sorted([str(pb), str(jsonl)]) and not report.unreadable
    lib = Library()
    assert {r.format for r in lib.runs()} == {"otlp"}
    hits = lib.search("tool:search Zürich")
    assert {h.path for h in hits} == {str(pb), str(jsonl)}
    assert all("[Zürich]" in h.marked() for h in hits)
    assert lib.run(pb).steps == 6  # type: ignore[union-attr]
    first = min(s.start_time for s in rec.spans) / 1e9  # "When": the first span, not the mtime
    assert lib.run(pb).started == pytest.approx(first, abs=1e-3)  # type: ignore[union-attr]
    indexer.close()
    lib.close()


def test_a_claude_code_session_is_one_run_with_its_sub_agents(tmp_path: Path) -> None:
    path, _main, _sub = full_session(tmp_path / "projects")
    os.utime(path, (1e9, 1e9))  # 2001: "When" must come from the transcript, not the mtime
    sub_file = next((tmp_path / "projects").rglob("agent-*.jsonl"))
    indexer = Indexer()
    report = indexer.index_folder(tmp_path / "projects")
    assert report.indexed == [str(path)]  # the sub-agent file is part of it
    lib = Library()
    row = lib.run(path)
    assert row is not None and row.format == "claude-code" and row.state == "ok"
    stamps = [json.loads(line).get("timestamp") for line in path.read_text().splitlines()]
    first = next(t for t in stamps if t)
    assert row.started == datetime.fromisoformat(first.replace("Z", "+00:00")).timestamp()
    assert [h.seq is not None for h in lib.search('"pytest"')] == [True]  # in the sub-agent
    assert indexer.owner(sub_file) == str(path)
    with sub_file.open("a") as fh:  # the sub-agent goes on: its session is read again
        fh.write("\n")
    assert indexer.index_file(path) == "indexed"
    assert indexer.index_folder(tmp_path / "projects").unchanged == [str(path)]
    indexer.close()
    lib.close()
    assert os.path.exists(sub_file)
