"""Claude Code transcripts: read into a run, with every fact checked against what the
fixture wrote (see ``claude_fixtures``: Claude Code has no producer library, so the
fixtures are built from the documented record types)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loom import Run

from loom_core.errors import LoadError
from loom_core.formats.claude_code import load_claude_code, sniff
from loom_core.formats.loader import load, sniff_format
from loom_core.views.timeline import build_timeline
from tests.core.clis import core, loom
from tests.core.formats.claude_fixtures import Session, full_session, text, tool_use
from tests.core.live_helpers import effect, header, intent, model_result


@pytest.fixture
def session(tmp_path: Path):
    return full_session(tmp_path)


def _models(doc):
    return [i for i, e in enumerate(doc.effects) if e.kind == "model"]


def test_counts_tokens_and_depth_match_what_was_written(session) -> None:
    path, main, sub = session
    doc = load(path)
    assert doc.format == "claude-code" and not doc.torn
    assert doc.warnings == (
        "1 entry of a type this reader does not know (marble-origami-commit), "
        "kept raw in the raw view of the step beside them",
    )
    models = _models(doc)
    tools = [e for e in doc.effects if e.kind.startswith("tool:")]
    side_calls, side_tools = 2, 1  # the in-file sidechain of full_session
    assert len(models) == main.model_calls + side_calls + sub.model_calls
    delegations = 2  # Task and Agent: their sub-agents' steps stand for them (no tool effect)
    assert len(tools) == main.tool_calls - delegations + side_tools + sub.tool_calls
    usage = [doc.result(i)["usage"] for i in models]
    assert sum(u["output_tokens"] for u in usage) == main.output_tokens + 14 + sub.output_tokens
    assert sum(u["input_tokens"] for u in usage) == main.input_tokens + 70 + sub.input_tokens
    assert sum(u["cache_read_input_tokens"] for u in usage) == main.cache_read
    assert sum(u["cache_creation_input_tokens"] for u in usage) == main.cache_write
    first = doc.result(models[0])  # four lines, one response: one call, usage once
    assert [c["name"] for c in first["tool_calls"]] == ["Bash", "Read"]
    assert first["text"] == "Let me look." and first["usage"]["output_tokens"] == 40
    depth1 = [e for e in doc.effects if e.depth == 1]
    assert len(depth1) == 3 + 3  # the in-file sidechain and the sub-agent's own file
    assert {doc.meta(i).agent for i, e in enumerate(doc.effects) if e.depth} == {
        "Explore",
        "general-purpose",
    }
    kinds = [e.kind for e in doc.effects]
    assert "tool:Agent" not in kinds and "tool:Task" not in kinds
    agent = next(
        i
        for i in models
        if doc.result(i)["tool_calls"][:1] and doc.result(i)["tool_calls"][0]["name"] == "Agent"
    )
    assert [e.depth for e in doc.effects[agent + 1 : agent + 5]] == [1, 1, 1, 0]
    assert doc.result(kinds.index("tool:Read")).startswith("ERROR: ")


def test_episodes_summary_compaction_and_raw_records(session) -> None:
    path, main, _sub = session
    doc = load(path)
    assert doc.episodes == [
        "List the files and read the README",
        "Explore src with a sub-agent",
        "Thanks, summarise",
    ]
    records = doc.extra["records"]
    first = _models(doc)[0]
    assert [r["type"] for r in records[first]][-4:] == ["assistant"] * 4
    assert records[first][-1]["message"]["id"] == records[first][0 + 3]["message"]["id"]
    last = records[_models(doc)[-1]]
    (compact,) = [i for i, e in enumerate(doc.effects) if e.kind == "compact"]
    assert records[compact][0]["subtype"] == "compact_boundary"  # a step where it happened
    assert compact == _models(doc)[-1] - 1
    # no compaction call was written (older versions): the summary entry, no tokens
    assert doc.result(compact).startswith("This session is being continued")
    assert doc.meta(compact).usage is None
    assert any(r.get("isCompactSummary") for r in last)  # travels with the next step
    assert [r["type"] for r in doc.extra["unknown"]] == ["marble-origami-commit"]
    assert doc.extra["unknown"][0] in last  # written after the last step: shown with it
    assert doc.extra["summaries"][0]["summary"] == "Explore the project"
    info = doc.extra["session"]
    assert info["title"] == "Explore the project" and info["gitBranch"] == "main"
    assert info["cwd"] == "/home/dev/project" and info["version"] == "2.0.14"
    after = _models(doc)[-2]  # the Agent call's result entry goes with the next step
    assert any(d_.get("toolUseResult", {}).get("agentId") == "a1b2c3d" for d_ in records[after])
    assert len(build_timeline(doc)) > len(doc.effects)  # every view builds on it


def test_torn_last_line_and_bad_lines_are_tolerated(session) -> None:
    path, _main, _sub = session
    data = path.read_bytes()
    whole = load_claude_code(data, str(path))
    torn = load_claude_code(data[:-40], str(path))
    assert torn.torn and len(torn.effects) == len(whole.effects)  # the summary line was torn
    lines = data.split(b"\n")
    lines.insert(3, b"{not json")
    broken = load_claude_code(b"\n".join(lines), str(path))
    assert len(broken.effects) == len(whole.effects)
    assert "line 4 cannot be read" in broken.warnings[0]
    assert broken.extra["unknown"][0]["line"] == 4


def test_sniff_claims_transcripts_not_loom_journals_or_sidecars(session, tmp_path) -> None:
    path, _main, _sub = session
    assert sniff(path.read_bytes(), str(path)) and sniff_format(path) == "claude-code"
    journal = header("hi") + intent(0, "model") + effect(0, "model", model_result("ok"))
    assert not sniff(journal, "run.jsonl")
    (tmp_path / "run.jsonl").write_bytes(journal)
    assert sniff_format(tmp_path / "run.jsonl") == "journal"
    sidecar = b'{"type": "session", "format": "loom-exchanges", "sessionId": "x", "uuid": "y"}\n'
    assert not sniff(sidecar, "x.exchanges.jsonl")
    assert not sniff(b'{"type": "user", "message": {}}\n', "x.jsonl")  # no session ids


def test_not_a_transcript_is_a_load_error(tmp_path) -> None:
    with pytest.raises(LoadError, match="not a Claude Code transcript"):
        load_claude_code(b'{"a": 1}\n[]\n', str(tmp_path / "x.jsonl"))


def test_convert_verifies_with_loom_harness_and_summary_keys(session, tmp_path) -> None:
    path, _main, _sub = session
    out = tmp_path / "converted.loom.json"
    done = core("convert", path, "-o", out)
    assert done.returncode == 0, done.stderr
    assert loom("trace", "verify", out).returncode == 0
    run = Run.load(str(out))
    assert len(run.log) == len(load(path).effects)
    mine = core("summary", "--json", path)
    trace = core("summary", "--json", out)
    assert mine.returncode == 0 and trace.returncode == 0, mine.stderr + trace.stderr
    assert json.loads(mine.stdout).keys() == json.loads(trace.stdout).keys()
    steps = core("steps", path)
    assert steps.returncode == 0 and "general-purpose" in steps.stdout
    # named, not versioned: "claude-code v2" was the version of the trace it was read into
    assert core("summary", path).stdout.startswith("Claude Code transcript  model: ")


_any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_FIELDS = ("message", "isSidechain", "parentUuid", "toolUseResult", "agentId", "uuid", "isMeta")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(field=st.sampled_from(_FIELDS), value=_any_json, which=st.integers(0, 6))
def test_any_json_in_any_field_reads_or_is_a_load_error(field, value, which) -> None:
    s = Session()
    s.prompt("go")
    s.reply([text("x"), tool_use("t1", "Task", prompt="go")])
    s.result("t1", "done")
    s.reply([text("y")])
    s.lines[which % len(s.lines)][field] = value
    try:
        doc = load_claude_code(s.data(), "/nowhere/s.jsonl")
    except LoadError:
        return
    build_timeline(doc)


def test_a_running_sub_agent_file_is_followed(session) -> None:
    """A live tab re-reads a session when one of its sub-agent files grows (newer Claude
    Code versions write a running sub-agent there, not in the session file)."""
    from loom_core.formats.claude_code import READER
    from loom_core.live.reread import RereadFollower

    path, _main, sub = session
    follower = RereadFollower(path, READER, probe=lambda _p: None)
    first = follower.read(final=True)
    assert first is not None and first.document is not None
    sub.reply([text("one more thought")], usage=(5, 5, 0, 0))
    sub.write(path.with_suffix("") / "subagents" / "agent-a1b2c3d.jsonl")
    again = follower.read(final=True)
    assert again is not None and again.document is not None
    assert len(again.document.effects) == len(first.document.effects) + 1


def test_a_sub_agent_call_sees_its_task_prompt(session) -> None:
    """The context of a sub-agent's first call starts with the prompt its Task/Agent call
    gave it (Claude Code names that input ``prompt``, loom-harness ``task``)."""
    from loom_core.views.frames import frame_at, neutral_messages

    path, _main, _sub = session
    doc = load(path)
    tl = build_timeline(doc)
    first_sub = next(i for i, e in enumerate(doc.effects) if e.depth == 1)
    frame = frame_at(tl.context, first_sub)
    assert frame is not None
    assert neutral_messages(frame)[0] == {"role": "user", "content": "map src"}


def test_a_first_line_longer_than_the_sniffed_head_is_still_claimed(tmp_path) -> None:
    """A pasted image makes the first entry megabytes long: the head holds no whole line."""
    s = Session()
    s.prompt("x" * 200_000)
    s.reply([text("ok")])
    path = s.write(tmp_path / "big.jsonl")
    assert sniff_format(path) == "claude-code"
    doc = load(path)
    assert len(doc.episodes[0]) == 200_000 and len(doc.effects) == 1
    assert not sniff(b'{"type": "header", "version": 1' + b" " * 70_000, "j.jsonl")


@settings(max_examples=150, deadline=None)
@given(
    data=st.binary(max_size=300)
    | st.lists(_any_json, max_size=4).map(lambda v: b"\n".join(json.dumps(x).encode() for x in v))
)
def test_any_bytes_sniff_without_raising_and_load_or_load_error(data: bytes) -> None:
    sniff(data, "x.jsonl")
    try:
        build_timeline(load_claude_code(data, "/nowhere/x.jsonl"))
    except LoadError:
        pass


def test_a_rewound_branch_is_left_out_of_the_steps() -> None:
    """The user went back after the second answer and sent another prompt: the new prompt
    hangs off the first answer, and the old branch is not part of the conversation."""
    s = Session()
    s.prompt("first")
    first_answer = s.reply([text("answer one")])[-1]["uuid"]
    s.prompt("second, later rewound")
    s.reply([text("answer two")])
    s.parent = first_answer  # the rewind
    s.prompt("second, for real")
    s.reply([text("answer three")])
    doc = load_claude_code(s.data(), "/nowhere/s.jsonl")
    texts = [doc.result(i)["text"] for i in _models(doc)]
    assert texts == ["answer one", "answer three"]
    assert doc.episodes == ["first", "second, for real"]
    assert [r.get("type") for r in doc.extra["abandoned"]] == ["user", "assistant"]
    assert "rewound branch" in doc.warnings[0]


def test_parallel_tool_results_are_never_taken_for_a_rewind() -> None:
    s = Session()
    s.prompt("go")
    s.reply([tool_use("a", "Bash", command="1"), tool_use("b", "Bash", command="2")])
    parent = s.parent
    s.result("a", "1")
    s.parent = parent  # both results hang off the response (a shape some versions write)
    s.result("b", "2")
    s.reply([text("done")])
    doc = load_claude_code(s.data(), "/nowhere/s.jsonl")
    assert sum(e.kind == "tool:Bash" for e in doc.effects) == 2 and not doc.warnings
