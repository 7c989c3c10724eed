"""A second proxy may not record to the ``--save`` of a proxy that is still recording.

Why: the desktop once proposed a running proxy's save path for the next one; the
second proxy emptied the first one's journal, took its live sidecar (exchanges, no
end marker yet) for a crashed session's, and both appended to it. Now the second
proxy exits 2 with one line and touches nothing, ``--force`` or not; once the first
one stopped, the path is free again.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from loom_core.proxy.sidecar import read_sidecar
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.harness import running_upstream
from tests.core.proxy.procs import ProxyProcess, wait_for
from tests.core.proxy.test_persistence import clients

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream() as fake:
        yield fake


def _refused(tmp: Path, name: str, *flags: str) -> str:
    """Start a proxy that must give up at once; its stderr."""
    second = ProxyProcess(tmp, *flags, name=name)
    try:
        wait_for(
            lambda: second.proc.poll() is not None or second.ready_file.exists(), 60, what=name
        )
        assert not second.ready_file.exists(), f"{name} started recording"
        assert second.proc.returncode == 2
        return second.err.read_text()
    finally:
        second.kill()


def test_a_save_a_running_proxy_records_to_is_refused(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    save = tmp_path / "s.loom.json"
    flags = ("--target", upstream.url, "--save", str(save))
    upstream.script(Reply(text="one"))
    with ProxyProcess(tmp_path, *flags, name="first") as first:
        a, _ = clients(first.url)
        a.messages.create(model="m", max_tokens=5, messages=HI)  # a sidecar without its end
        # the trace itself is rewritten in the background while recording: the others
        files = [tmp_path / "s.exchanges.jsonl", tmp_path / "s.journal.jsonl"]
        before = {p: p.read_bytes() for p in files}
        for name, force in (("second", ()), ("forced", ("--force",))):
            err = _refused(tmp_path, name, *flags, *force)
            assert err.count("\n") == 1 and "a running proxy is recording to it" in err, err
        assert {p: p.read_bytes() for p in files} == before  # nothing touched, nothing recovered
        assert not list(tmp_path.glob("s.recovered*"))
        assert first.stop(signal.SIGTERM) == 0
    assert read_sidecar(tmp_path / "s.exchanges.jsonl").ended
    assert [e["result"]["text"] for e in json.loads(save.read_text())["log"]] == ["one"]
    with ProxyProcess(tmp_path, *flags, "--force", name="after") as after:  # free again
        assert after.stop(signal.SIGTERM) == 0
