"""``python -m loom_core fork``: exit codes, output, dry run, and real SDK providers
against the fake upstream (which answers from what it was sent)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.core.clis import core
from tests.core.fork.checks import kinds, loom_ok, read, tail_of
from tests.core.proxy.fake_upstream import FakeUpstream, api_error
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import running_upstream

NOTE = "Only Oslo matters."
FAKE_ANTHROPIC = "sk-ant-fake-" + "0" * 20
FAKE_OPENAI = "sk-fake-" + "1" * 20


def test_fork_writes_a_branch(parents: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "b.loom.json"
    done = core(
        "fork",
        parents["weather"],
        "--step",
        "3",
        "--inject",
        NOTE,
        "--provider",
        "scripted",
        "--reason",
        "hint",
        "--temperature",
        "0.3",
        "--max-tokens",
        "77",
        "-o",
        out,
    )
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}: status done; 1 live model call(s)" in done.stdout
    assert "output: scripted reply" in done.stdout and done.stderr == ""
    fork = read(out)["fork"]
    assert fork["reason"] == "hint" and fork["edit"]["inject"] == NOTE
    assert (fork["request"]["temperature"], fork["request"]["max_tokens"]) == (0.3, 77)
    loom_ok(out)
    as_json = core(
        "fork",
        parents["weather"],
        "--step",
        "0",
        "--provider",
        "scripted",
        "--max-turns",
        "3",
        "-o",
        out,
        "--json",
        "--force",
    )  # replacing: said so
    assert as_json.returncode == 0
    result = json.loads(as_json.stdout)
    assert (result["status"], result["path"], result["live_calls"]) == ("done", str(out), 1)


def test_dry_run_calls_nothing_and_writes_nothing(parents: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "never.loom.json"
    text = core(
        "fork", parents["weather"], "--step", "3", "--dry-run", "--provider", "scripted", "-o", out
    )
    assert text.returncode == 0, text.stderr
    assert "replays free: 3 step(s)" in text.stdout
    assert "runs live: ~2 model call(s) (max 20), ~550 tokens (500 in / 50 out)" in text.stdout
    assert "provider: scripted (available)" in text.stdout and not out.exists()
    as_json = core(
        "fork",
        parents["weather"],
        "--step",
        "3",
        "--dry-run",
        "--json",
        "--max-turns",
        "1",
        "--inject",
        "x" * 400,
    )
    plan = json.loads(as_json.stdout)
    assert (plan["replayed"], plan["live_calls"], plan["input_tokens"]) == (3, 1, 300)
    assert plan["cost_usd"] == pytest.approx((300 * 3 + 20 * 15) / 1e6)


@pytest.mark.parametrize(
    "args, cause",
    [
        (["--step", "1", "-o", "{out}"], "step 1 is a tool:get_weather step, not a model step"),
        (["--step", "3", "--redact", "0", "-o", "{out}"], "cannot redact step 0"),
        (["--step", "3", "--max-turns", "0", "-o", "{out}"], "--max-turns must be at least 1"),
        (["--step", "3", "--provider", "scripted", "-o", "{out}/x.loom.json"], "no such directory"),
        (
            ["--step", "3", "--provider", "anthropic", "-o", "{out}"],
            "provider anthropic is not usable: ANTHROPIC_API_KEY is not set",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(
    parents: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    cause: str,
) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    out = tmp_path / "b.loom.json"
    done = core("fork", parents["weather"], *[a.replace("{out}", str(out)) for a in args])
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and cause in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


def test_an_existing_output_is_never_replaced_unasked(
    parents: dict[str, Any], tmp_path: Path
) -> None:
    """``fork RUN -o RUN`` used to replace the recorded parent with its branch."""
    parent = tmp_path / "parent.loom.json"
    parent.write_bytes(Path(parents["weather"]).read_bytes())
    before = parent.read_bytes()
    for target in (parent, tmp_path / "other.loom.json"):
        if not target.exists():
            target.write_text("{}")
        kept = target.read_bytes()
        done = core("fork", parent, "--step", "3", "--provider", "scripted", "-o", target)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "already exists" in done.stderr and "--force" in done.stderr
        assert target.read_bytes() == kept and done.stdout == ""
    assert parent.read_bytes() == before


def test_without_output_the_branch_goes_to_the_runs_folder(
    parents: dict[str, Any], tmp_path: Path, runs_dir: Path
) -> None:
    parent = tmp_path / "w.loom.json"
    parent.write_bytes(Path(parents["weather"]).read_bytes())
    paths = []
    for _ in range(2):
        done = core("fork", parent, "--step", "3", "--provider", "scripted", "--json")
        assert done.returncode == 0, done.stderr
        paths.append(Path(json.loads(done.stdout)["path"]))
    assert paths == [runs_dir / "w.fork3.loom.json", runs_dir / "w.fork3-2.loom.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs", "w.loom.json"]  # none beside
    assert read(paths[0])["fork"]["parent"]["path"] == str(parent)


def test_unreadable_trace_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.loom.json"
    bad.write_text("{not json")
    for path in (bad, tmp_path / "missing.loom.json"):
        done = core("fork", path, "--step", "0", "-o", tmp_path / "b.loom.json")
        assert done.returncode == 2 and done.stderr.startswith(f"error: {path}: ")
        assert done.stderr.count("\n") == 1


def test_agent_mode_is_handed_over(parents: dict[str, Any], tmp_path: Path) -> None:
    """``--mode agent`` belongs to the agent re-run; a harness trace was never recorded
    with ``record -- COMMAND``, so it is refused as bad input, in one line."""
    done = core(
        "fork", parents["weather"], "--step", "3", "--mode", "agent", "-o", tmp_path / "b.loom.json"
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "b.loom.json").exists()


def test_help_explains_the_exit_codes() -> None:
    shown = core("fork", "--help")
    assert shown.returncode == 0
    assert "needs_tool_result" in shown.stdout and "--budget-tokens" in shown.stdout


# -- real SDK providers against the fake upstream -----------------------------------------


def oslo_model(endpoint: str, body: dict[str, Any]) -> Reply:
    """Looks Oslo up (the parent did) when the note is there, then answers; else a plain
    answer; a Rome request makes it ask for a call the parent never made."""
    sent = json.dumps(body, ensure_ascii=False)
    if "Rome" in sent:
        return Reply(calls=[("r1", "get_weather", {"city": "Rome"})])
    if NOTE not in sent:
        return Reply(text="Paris and Oslo are fine.")
    if "Oslo: reading 1" in sent.split(NOTE, 1)[1]:  # the reused result came after the note
        return Reply(text="Oslo is cold.", usage=(90, 9))
    return Reply(calls=[("n1", "get_weather", {"city": "Oslo"})], usage=(80, 8))


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeUpstream]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI)
    for var in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with running_upstream(oslo_model) as fake:
        yield fake


@pytest.mark.parametrize(
    "provider, suffix, model, key",
    [
        ("anthropic", "", "claude-sonnet-4-5", FAKE_ANTHROPIC),
        ("openai", "/v1", "gpt-4.1-mini", FAKE_OPENAI),
        ("openai-responses", "/v1", "gpt-4.1-mini", FAKE_OPENAI),
    ],
)
def test_fork_through_an_sdk_provider(
    parents: dict[str, Any],
    tmp_path: Path,
    upstream: FakeUpstream,
    provider: str,
    suffix: str,
    model: str,
    key: str,
) -> None:
    out = tmp_path / "b.loom.json"
    done = core(
        "fork",
        parents["weather"],
        "--step",
        "3",
        "--inject",
        NOTE,
        "--provider",
        provider,
        "--base-url",
        upstream.url + suffix,
        "--model",
        model,
        "-o",
        out,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "status done" in done.stdout and "1 recorded result(s) reused" in done.stdout
    branch = read(out)
    tail = tail_of(branch)
    assert kinds(tail) == ["edit", "model", "tool:get_weather", "model"]
    assert tail[2]["result"] == "Oslo: reading 1" and tail[2]["meta"]["from_parent"] == 2
    assert branch["output"] == "Oslo is cold." and branch["fork"]["provider"] == provider
    assert tail[3]["result"]["usage"] == {"input_tokens": 90, "output_tokens": 9}
    assert len(upstream.seen) == 2
    assert all(any(key in v for v in s.headers.values()) for s in upstream.seen)  # from env
    assert all(s.body["model"] == model for s in upstream.seen)
    loom_ok(out)
    assert FAKE_ANTHROPIC not in out.read_text() and FAKE_OPENAI not in out.read_text()


def test_sdk_fork_that_pauses_or_fails(
    parents: dict[str, Any], tmp_path: Path, upstream: FakeUpstream
) -> None:
    out = tmp_path / "b.loom.json"
    paused = core(
        "fork",
        parents["weather"],
        "--step",
        "5",
        "--inject",
        "And Rome?",
        "--provider",
        "anthropic",
        "--base-url",
        upstream.url,
        "-o",
        out,
    )
    assert paused.returncode == 0, paused.stderr
    assert "status needs_tool_result" in paused.stdout
    assert 'waiting for a result of get_weather({"city": "Rome"}) [call r1]' in paused.stdout
    assert read(out)["fork"]["pending_call"]["id"] == "r1"
    loom_ok(out)
    upstream.script(api_error(400, "invalid_request_error", "prompt is too long"))
    failed = core(
        "fork",
        parents["weather"],
        "--step",
        "3",
        "--provider",
        "openai",
        "--base-url",
        upstream.url + "/v1",
        "-o",
        out,
        "--json",
        "--force",
    )
    assert failed.returncode == 1
    result = json.loads(failed.stdout)
    assert result["status"] == "error" and "prompt is too long" in result["error"]
    assert kinds(tail_of(read(out))) == ["edit"] and read(out)["fork"]["status"] == "error"
    loom_ok(out)


@pytest.mark.parametrize("mode", ["model", "agent"])
def test_a_refusal_is_one_line_whatever_the_name_holds(
    parents: dict[str, Any], tmp_path: Path, mode: str
) -> None:
    """A refusal quotes the file (or a step's kind) it is about; a line break in it must
    not break the CLI's one line per refusal (both fork modes print through print_error)."""
    target = tmp_path / "two\nlines.loom.json"
    target.write_text("{}")
    done = core(
        "fork",
        parents["weather"],
        "--step",
        "3",
        "--mode",
        mode,
        "-o",
        target,
        *(["--provider", "scripted"] if mode == "model" else []),
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "two\\nlines" in done.stderr and "already exists" in done.stderr
    assert target.read_text() == "{}"
