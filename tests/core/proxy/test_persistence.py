"""Durability: what is on disk when, after a clean stop, a signal, or ``kill -9``.

Why in real processes: SIGINT/SIGTERM handling and a hard kill can only be shown on
a process. The fake upstream runs in this test's loop thread; the proxy is a child.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import anthropic
import openai
import pytest

from loom_core.formats.loader import load
from loom_core.proxy import session as session_module
from loom_core.proxy.session import RecordingSession
from loom_core.proxy.sidecar import read_sidecar
from tests.core.clis import core
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import (
    ANTHROPIC_KEY,
    OPENAI_KEY,
    Rig,
    grep_keys,
    loom_accepts,
    running_upstream,
    start_rig,
)
from tests.core.proxy.procs import ProxyProcess, wait_for

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream() as fake:
        yield fake


def clients(url: str) -> tuple[anthropic.Anthropic, openai.OpenAI]:
    return (
        anthropic.Anthropic(base_url=url, api_key=ANTHROPIC_KEY, max_retries=0, timeout=10),
        openai.OpenAI(base_url=url + "/v1", api_key=OPENAI_KEY, max_retries=0, timeout=10),
    )


def three_exchanges(url: str, upstream: FakeUpstream) -> None:
    upstream.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    a, o = clients(url)
    a.messages.create(model="m", max_tokens=5, messages=HI)
    with a.messages.stream(model="m", max_tokens=5, messages=HI) as s:
        s.get_final_message()
    o.chat.completions.create(model="g", messages=HI)


def test_kill_9_loses_no_completed_exchange(tmp_path: Path, upstream: FakeUpstream) -> None:
    save = tmp_path / "crash.loom.json"
    flags = ("--target", upstream.url, "--save", str(save))
    with ProxyProcess(tmp_path, *flags, name="first") as first:
        three_exchanges(first.url, upstream)
        first.kill()  # SIGKILL: no finalize, no end marker
    journal = Path(first.ready["journal"])
    out = tmp_path / "from-journal.loom.json"
    assert core("convert", journal, "-o", out).returncode == 0
    assert [e["result"]["text"] for e in json.loads(out.read_text())["log"]] == [
        "one",
        "two",
        "three",
    ]
    with ProxyProcess(tmp_path, *flags, name="second") as second:
        recovered = Path(second.ready["recovered"])
        assert recovered.name == "crash.recovered.loom.json"
        assert "recovered a crashed session's 3 exchange(s)" in second.err.read_text()
        trace = json.loads(recovered.read_text())
        assert trace["output"] == "three" and len(trace["wire"]) == 3
        assert trace["wire"][2]["object"] == "chat.completion"
        loom_accepts(recovered)
        assert second.stop(signal.SIGTERM) == 0
    assert grep_keys(tmp_path) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signals_finalize(tmp_path: Path, upstream: FakeUpstream, sig: int) -> None:
    save = tmp_path / "s.loom.json"
    # SIGINT ignored at spawn, as for a background job of a script (loom-harness §13.16)
    with ProxyProcess(
        tmp_path,
        "--target",
        upstream.url,
        "--save",
        str(save),
        "--save-interval",
        "60",
        ignore_sigint=sig == signal.SIGINT,
    ) as proc:
        first_line = wait_for(lambda: proc.out.read_text(), what="the banner")
        assert first_line.startswith(f"loom proxy on {proc.url} (recording -> {save})")
        assert f"export ANTHROPIC_BASE_URL={proc.url}\n" in first_line
        assert f"export OPENAI_BASE_URL={proc.url}/v1" in first_line
        three_exchanges(proc.url, upstream)
        assert proc.stop(sig) == 0
    assert not proc.ready_file.exists()
    trace = json.loads(save.read_text())
    assert [w.get("object", w.get("type")) for w in trace["wire"]] == [
        "message",
        "message",
        "chat.completion",
    ]
    assert read_sidecar(tmp_path / "s.exchanges.jsonl").ended
    loom_accepts(save)


def test_trace_is_written_in_the_background_not_on_the_request_path(tmp_path: Path) -> None:
    async def scenario() -> tuple[bool, bool, dict]:  # type: ignore[type-arg]
        session = RecordingSession(tmp_path / "t.loom.json", save_interval=60)
        request = {"model": "m", "messages": HI}
        response = {
            "type": "message",
            "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        assert session.record("/v1/messages", "anthropic", request, response, [], 1.0)
        after_record = session.paths.save.exists()  # no saver running: nothing written
        session.start()
        await asyncio.sleep(0)  # the saver wakes up: the first write follows at once
        await session.close()
        return (
            after_record,
            session.paths.journal.exists(),
            json.loads(session.paths.save.read_text()),
        )

    written_by_record, journal, trace = asyncio.run(scenario())
    assert not written_by_record and journal and trace["output"] == "ok"


def test_the_trace_waits_for_a_pause_in_the_exchanges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While exchanges keep coming (here: no pause is ever long enough) the trace is
    not rewritten -- the journal and the sidecar have every exchange -- and a stop
    writes it whole."""
    monkeypatch.setattr(session_module, "QUIET", 3600.0)
    response = {"type": "message", "content": [{"type": "text", "text": "ok"}]}

    async def scenario() -> tuple[bool, dict]:  # type: ignore[type-arg]
        session = RecordingSession(tmp_path / "t.loom.json", save_interval=0)
        session.start()
        for _ in range(3):
            assert session.record("/v1/messages", "anthropic", {"messages": HI}, response, [], 1)
            for _ in range(20):
                await asyncio.sleep(0)  # the saver has every chance to run
        await asyncio.to_thread(lambda: None)
        during = session.paths.save.exists()
        await session.close()
        return during, json.loads(session.paths.save.read_text())

    during, trace = asyncio.run(scenario())
    assert not during and len(trace["wire"]) == 3


def test_background_saves_keep_the_trace_current(rig: Rig) -> None:
    rig.upstream.script(Reply(text="first"), Reply(text="second"))
    client = rig.anthropic()
    client.messages.create(model="m", max_tokens=5, messages=HI)
    wait_for(
        lambda: rig.save.exists() and load(rig.save).header.output == "first",
        what="the first background save",
    )
    client.messages.create(model="m", max_tokens=5, messages=HI)
    wait_for(lambda: load(rig.save).header.output == "second", what="a later save")
    loom_accepts(rig.save)  # a mid-run trace is a complete, valid trace


def test_scrub_redacts_what_is_stored_not_what_is_sent(tmp_path: Path) -> None:
    secret_in = "AKIAABCDEFGHIJKLMNOP and postgres://admin:hunter2hunter2@db/x"
    secret_out = "use ghp_" + "a1B2c3D4e5" * 4 + " and sk-ant-api03-" + "Zz9" * 10
    rig = start_rig(tmp_path, scrub=True)
    try:
        rig.upstream.script(
            Reply(
                text=secret_out,
                calls=[("toolu_1", "Bash", {"command": "export PASSWORD=s3cretpassw0rd"})],
            )
        )
        message = rig.anthropic().messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": secret_in}]
        )
        assert message.content[0].text == secret_out  # the client gets the real values
        assert rig.upstream.seen[0].body["messages"][0]["content"] == secret_in
        rig.stop()
        stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
        for secret in (
            "AKIAABCDEFGHIJKLMNOP",
            "hunter2hunter2",
            "ghp_a1B2",
            "sk-ant-api03-Zz9",
            "s3cretpassw0rd",
        ):
            assert secret.encode() not in stored, secret
        for kind in (
            "aws-key-id",
            "url-password",
            "github-token",
            "anthropic-key",
            "credential-assignment",
        ):
            assert f"[scrubbed:{kind}]".encode() in stored, kind
        loom_accepts(rig.save)
    finally:
        rig.close()


def test_every_exchange_is_on_disk_before_the_client_sees_its_end(rig: Rig) -> None:
    """The final SSE event (and a JSON body) reaches the client only after the journal
    and the sidecar hold the exchange: a client that saw an answer can rely on it."""
    journal, sidecar = rig.tmp / "session.journal.jsonl", rig.tmp / "session.exchanges.jsonl"

    def on_disk() -> tuple[int, int]:
        models = sum('"kind": "model"' in line for line in journal.read_text().splitlines())
        return models, len(read_sidecar(sidecar).exchanges)

    rig.upstream.script(*(Reply(text=t) for t in "abcd"))
    a, o = rig.anthropic(), rig.openai()
    with a.messages.stream(model="m", max_tokens=5, messages=HI) as s:
        stops = [on_disk() for event in s if event.type == "message_stop"]
    assert stops == [(1, 1)]
    chunks = list(
        o.chat.completions.create(
            model="g", messages=HI, stream=True, stream_options={"include_usage": True}
        )
    )
    assert chunks[-1].usage is not None and on_disk() == (2, 2)  # [DONE] came after the record
    with o.responses.stream(model="g", input="hi") as r:
        done = [on_disk() for event in r if event.type == "response.completed"]
    assert done == [(3, 3)]
    a.messages.create(model="m", max_tokens=5, messages=HI)
    assert on_disk() == (4, 4)


def test_a_port_in_use_fails_cleanly_and_touches_no_file(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        sidecar = tmp_path / "s.exchanges.jsonl"
        sidecar.write_text("a previous session\n")
        done = core(
            "proxy", "--port", str(taken.getsockname()[1]), "--save", str(tmp_path / "s.loom.json")
        )
    assert done.returncode == 2 and done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr
    assert sidecar.read_text() == "a previous session\n"
    assert not (tmp_path / "s.journal.jsonl").exists()


def test_a_later_prompt_reaches_the_journal_without_rewriting_it(rig: Rig) -> None:
    """The journal's header is amended (appended) when a new user prompt appears, so a
    live viewer shows every episode; loom-harness's reader agrees, nothing is lost."""
    from loom.journal import Journal

    rig.upstream.script(Reply(text="first"), Reply(text="second"))
    client = rig.anthropic()
    client.messages.create(model="m", max_tokens=5, messages=HI)
    client.messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "And now?"}]
    )
    trace = rig.stop()
    journal = rig.save.with_name(rig.save.name.replace(".loom.json", ".journal.jsonl"))
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["header", "effect", "header", "effect"]
    ours = load(journal)
    assert ours.episodes == trace["episodes"] == ["hi", "And now?"]
    assert len(ours.effects) == len(trace["log"]) == 2
    header, entries, unfinished = Journal.read_full(str(journal))
    assert header["episodes"] == trace["episodes"] and len(entries) == 2 and not unfinished
