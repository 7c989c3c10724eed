"""``approvals``/``approve`` without ``--port`` find the running proxy by its token file.

Real parts: our proxy on the test rig with a confirm shield (it writes its token file
into a temp runtime dir), the real ``anthropic`` SDK holding a call, our CLI as a
subprocess; loom-harness's own proxy is found the same way. A stale token file (its port answers nothing) is ignored; a second live
one makes the choice ambiguous, which the CLI says in one line.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from loom_core.proxy.running_proxies import running_proxies, token_files
from tests.core.clis import core
from tests.core.proxy.harness import Rig
from tests.core.proxy.test_control import agent_call, held, shielded
from tests.core.proxy.test_control_client import loom_proxy  # noqa: F401 (fixture)


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "runtime"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(folder))  # the CLI subprocess inherits it
    return folder


@pytest.fixture
def rig(tmp_path: Path, runtime: Path) -> Iterator[Rig]:
    with shielded(tmp_path) as r:
        yield r


def _dead_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return int(s.getsockname()[1])


def test_cli_finds_the_one_running_proxy(rig: Rig, runtime: Path) -> None:
    (runtime / f"{_dead_port()}.token").write_text("0" * 32)  # a crashed proxy's leftover
    (runtime / "notes.token").write_text("x")  # not a port: ignored
    assert [f.port for f in running_proxies()] == [rig.proxy.port]
    assert len(token_files()) == 2
    assert core("approvals").stdout.strip() == "no pending approvals"
    with ThreadPoolExecutor(1, thread_name_prefix="agent") as pool:
        answer = agent_call(rig, pool)
        call = held(rig.proxy.port)
        listed = core("approvals")
        assert listed.stdout.startswith(f"[{call.id}] deploy("), listed.stderr
        done = core("approve", call.id, "--as", "erin")
        assert (done.returncode, done.stdout.strip()) == (0, f"approved [{call.id}]")
        assert [b.type for b in answer.result(10).content][-1] == "tool_use"


def test_cli_says_when_there_is_no_proxy_or_several(rig: Rig, runtime: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as other:  # a second live proxy's port
        port = int(other.getsockname()[1])
        (runtime / f"{port}.token").write_text("1" * 32)
        for argv in (("approvals",), ("approve", "abc123")):
            many = core(*argv)
            assert many.returncode == 2 and many.stderr.count("\n") == 1, many.stderr
            assert "2 proxies are running" in many.stderr
            assert str(port) in many.stderr and str(rig.proxy.port) in many.stderr
        explicit = core("approvals", "--port", str(rig.proxy.port))
        assert explicit.stdout.strip() == "no pending approvals"
    rig.lt.run(rig.proxy.close())  # its token file goes; the other port is closed now
    none = core("approvals")
    assert none.returncode == 2 and none.stderr.count("\n") == 1
    assert "no proxy with a shield is running" in none.stderr and "--port" in none.stderr
    bad = core("approvals", "--port", "70000")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_loom_harness_proxies_are_found_too(loom_proxy) -> None:  # noqa: F811
    port = loom_proxy[0]
    assert [f.port for f in running_proxies()] == [port]
    listed = core("approvals")
    assert (listed.returncode, listed.stdout.strip()) == (0, "no pending approvals"), listed.stderr
