"""A write that fails (a full disk) withholds the answer and leaves every file whole.

Persist before answer means a client never holds an answer the recording lacks: when
the exchange cannot be written, the client gets a 5xx (a JSON call) or an error event
and a torn stream, with the reason; nothing of that exchange stays in the files or in
memory, and everything recorded before (and after the disk frees up) reads back whole
-- by loom-harness's journal reader too, which stops at the first torn line.
"""

from __future__ import annotations

import errno
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from loom.journal import Journal

from loom_core.formats.append_file import AppendFile
from loom_core.proxy.config import SessionPaths
from loom_core.proxy.recovery import recover_previous
from loom_core.proxy.session import WITHHELD
from loom_core.proxy.sidecar import read_sidecar
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import (
    ANTHROPIC_KEY,
    Rig,
    loom_accepts,
    model_results,
    running_upstream,
)
from tests.core.proxy.procs import ProxyProcess

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def full(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """File names (``exchanges``, ``journal``) whose appends fail with ENOSPC while listed."""
    failing: set[str] = set()
    append = AppendFile.append

    def maybe_full(self: AppendFile, data: bytes) -> None:
        if any(self.path.endswith(f".{name}.jsonl") for name in failing):
            raise OSError(errno.ENOSPC, "No space left on device")
        append(self, data)

    monkeypatch.setattr(AppendFile, "append", maybe_full)
    return failing


def journal_texts(path: Path) -> list[str]:
    _, effects, _ = Journal.read_full(str(path))  # loom-harness stops at a torn line
    assert [e.seq for e in effects] == list(range(len(effects)))
    return [e.result["text"] for e in effects if e.kind == "model"]


def files_hold(rig: Rig, texts: list[str]) -> None:
    sidecar = read_sidecar(rig.tmp / "session.exchanges.jsonl")
    assert sidecar.skipped == 0 and [x.n for x in sidecar.exchanges] == list(range(len(texts)))
    assert journal_texts(rig.tmp / "session.journal.jsonl") == texts


@pytest.mark.parametrize("failing", ["exchanges", "journal"])
def test_a_json_answer_is_withheld_with_a_507_when_its_record_cannot_be_written(
    rig: Rig, full: set[str], failing: str
) -> None:
    """``journal``: the sidecar line was written, then taken back."""
    rig.upstream.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    client = rig.anthropic()
    client.messages.create(model="m", max_tokens=5, messages=HI)
    full.add(failing)
    with pytest.raises(anthropic.APIStatusError) as refused:
        client.messages.create(model="m", max_tokens=5, messages=HI)
    assert refused.value.status_code == 507
    assert refused.value.body == {
        "error": f"{WITHHELD}: cannot write {rig.tmp / 'session.exchanges.jsonl'}: "
        "[Errno 28] No space left on device"
    }
    full.clear()  # the disk has room again: recording goes on, numbered as before
    client.messages.create(model="m", max_tokens=5, messages=HI)
    files_hold(rig, ["one", "three"])
    trace = rig.stop()
    assert [r["text"] for r in model_results(trace)] == ["one", "three"]
    assert len(trace["wire"]) == 2
    loom_accepts(rig.save)


def test_a_stream_whose_record_fails_ends_in_an_error_event_for_each_sdk(
    rig: Rig, full: set[str]
) -> None:
    """The final event is withheld; each SDK raises with the reason, none sees an end."""
    rig.upstream.script(*(Reply(text=t) for t in ("a", "b", "c", "d")))
    a, o = rig.anthropic(), rig.openai()
    full.add("exchanges")
    with pytest.raises(anthropic.APIStatusError, match="No space left on device"):
        with a.messages.stream(model="m", max_tokens=5, messages=HI) as s:
            s.get_final_message()
    with pytest.raises(openai.APIError, match=f"{WITHHELD}: .*No space left on device"):
        list(o.chat.completions.create(model="g", messages=HI, stream=True))
    with pytest.raises(openai.APIError, match="No space left on device"):
        with o.responses.stream(model="g", input="hi") as r:
            r.get_final_response()
    full.clear()
    with a.messages.stream(model="m", max_tokens=5, messages=HI) as s:
        assert s.get_final_message().content[0].text == "d"  # type: ignore[union-attr]
    files_hold(rig, ["d"])
    assert [r["text"] for r in model_results(rig.stop())] == ["d"]


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream() as fake:
        yield fake


def exchanges(url: str, upstream: FakeUpstream, streams: tuple[bool, ...]) -> list[Any]:
    """One call per entry (True: a stream); the text each got, or (status, error body)."""
    upstream.script(*(Reply(text=t * 400) for t in "abcd"[: len(streams)]))
    client = anthropic.Anthropic(base_url=url, api_key=ANTHROPIC_KEY, max_retries=0, timeout=10)
    out: list[Any] = []
    for stream in streams:
        try:
            if stream:
                with client.messages.stream(model="m", max_tokens=5, messages=HI) as s:
                    out.append(s.get_final_message().content[0].text)  # type: ignore[union-attr]
            else:
                reply = client.messages.create(model="m", max_tokens=5, messages=HI)
                out.append(reply.content[0].text)  # type: ignore[union-attr]
        except anthropic.APIStatusError as err:
            out.append((err.status_code, str(err.body)))
    return out


def test_a_real_full_file_system_fails_the_exchange_and_tears_no_line(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    """A real process whose files may not grow past a limit the kernel enforces
    (``RLIMIT_FSIZE``): the third exchange's line is cut short by the kernel, then
    refused (EFBIG); the proxy cuts it back, answers 507, and a clean stop leaves two
    exchanges that every reader, and the next start, reads whole."""
    probe_save = tmp_path / "probe" / "s.loom.json"
    probe_save.parent.mkdir()
    flags = ("--target", upstream.url, "--save", str(probe_save))
    with ProxyProcess(probe_save.parent, *flags) as probe:  # the same two, no limit
        assert exchanges(probe.url, upstream, (False, True)) == ["a" * 400, "b" * 400]
        paths = SessionPaths.of(probe_save)
        sizes = [p.stat().st_size for p in (paths.exchanges, paths.journal)]
    save = tmp_path / "full" / "s.loom.json"
    save.parent.mkdir()
    limit = max(sizes) + 64  # room for two exchanges, not for a third
    flags = ("--target", upstream.url, "--save", str(save))
    with ProxyProcess(save.parent, *flags, max_file_size=limit) as proc:
        got = exchanges(proc.url, upstream, (False, True, False, True))
        assert proc.stop(signal.SIGTERM) == 0
    assert got[:2] == ["a" * 400, "b" * 400]
    assert got[2][0] == 507 and "File too large" in got[2][1] and WITHHELD in got[2][1]
    assert got[3][0] == 200 and "File too large" in got[3][1]  # the stream's error event
    paths = SessionPaths.of(save)
    assert journal_texts(paths.journal) == ["a" * 400, "b" * 400]
    sidecar = read_sidecar(paths.exchanges)
    assert sidecar.skipped == 0 and len(sidecar.exchanges) == 2
    assert not save.exists() and not sidecar.ended  # the trace did not fit: no end marker
    assert "the next start with the same --save recovers it" in proc.err.read_text()
    recovered = recover_previous(paths)
    assert recovered is not None
    assert [w["content"][0]["text"] for w in json.loads(recovered.read_text())["wire"]] == [
        "a" * 400,
        "b" * 400,
    ]
