"""The control plane under hostile input: malformed decide bodies and a planted token link.

Real parts: our proxy with a confirm shield on the test rig, raw HTTP for bodies no
client would send, the real agent (``anthropic`` SDK) for a held call that must survive
every rejected body and still be decided by a good one.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from loom_core.proxy.control import ControlPlane, write_token_file
from loom_core.proxy.control_client import ControlClient
from tests.core.proxy.harness import Rig
from tests.core.proxy.test_control import _raw, agent_call, held, shielded

DEEP = 990  # json.loads raises RecursionError here (900 is fine), msgspec too

BAD_BODIES: list[tuple[bytes, str]] = [
    (b'{"id": ' + b"[" * DEEP + b"]" * DEEP + b"}", "nested deeper than"),
    (b"[" * 5000 + b"]" * 5000, "nested deeper than"),
    (
        b'{"id": "a", "edited_input": ' + b'{"x": ' * 100 + b"1" + b"}" * 100 + b"}",
        "nested deeper than",
    ),
    (b"not json", "not valid JSON"),
    (b'{"id": "a",', "not valid JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[1, 2]", "must be a JSON object"),
    (b'"approve"', "must be a JSON object"),
    (b'{"id": 5, "decision": "approve"}', "'id' must be a string"),
    (b'{"id": "a", "decision": ["approve"]}', "'decision' must be a string"),
    (b'{"id": "a", "decision": "deny", "reason": {"x": 1}}', "'reason' must be a string"),
    (b'{"id": "a", "decision": "approve", "by": true}', "'by' must be a string"),
    (b'{"id": "a", "decision": "approve", "always_allow": 3}', "'always_allow' must be a string"),
    (b'{"id": "a", "edited_input": {"n": 1e400}}', "number out of range"),
    (b'{"id": "a", "edited_input": {"n": ' + b"9" * 30 + b"}}", "number out of range"),
    (b'{"id": "a", "edited_input": {"n": ' + b"9" * 5000 + b"}}", "not valid JSON"),
    (b'{"id": "a", "edited_input": {"n": NaN}}', "not a JSON number"),
    (b'{"id": "a", "edited_input": {"n": -Infinity}}', "not a JSON number"),
    (b'{"id": "a", "decision": "deny", "reason": "\\ud800"}', "lone surrogate"),
    (b'{"id": "a", "edited_input": {"\\udfff": 1}}', "lone surrogate"),
]


@pytest.fixture(autouse=True)
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "runtime"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(folder))
    return folder


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    with shielded(tmp_path) as r:
        yield r


def test_malformed_decide_bodies_get_a_400_naming_the_cause(rig: Rig) -> None:
    port = rig.proxy.port
    token = ControlClient(port).token or ""
    headers = {"x-loom-token": token, "content-type": "application/json"}
    with ThreadPoolExecutor(1, thread_name_prefix="agent") as pool:
        answer = agent_call(rig, pool)
        call = held(port)
        for raw, cause in BAD_BODIES:
            status, body = _raw(
                port,
                "POST",
                "/loom/shield/decide",
                headers,
                raw.replace(b'"a"', json.dumps(call.id).encode()),
            )
            assert status == 400 and cause in body["error"], (raw[:60], status, body)
        assert [c.id for c in ControlClient(port).pending()] == [call.id]  # nothing decided
        status, body = _raw(
            port,
            "POST",
            "/loom/shield/decide",
            headers,
            json.dumps(
                {
                    "id": call.id,
                    "decision": "approve",
                    "by": "ok",
                    "edited_input": {"n": 2**62, "x": 1.5},
                }
            ).encode(),
        )
        assert (status, body) == (200, {"ok": True})
        [use] = [b for b in answer.result(10).content if b.type == "tool_use"]
        assert use.input == {"n": 2**62, "x": 1.5}


def test_a_planted_symlink_is_replaced_not_followed(tmp_path: Path, runtime: Path) -> None:
    runtime.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("someone else's file\n")
    victim.chmod(0o644)
    link = runtime / "8788.token"
    link.symlink_to(victim)
    write_token_file(link, "f" * 32)
    assert victim.read_text() == "someone else's file\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert not link.is_symlink() and link.read_text() == "f" * 32
    assert stat.S_IMODE(os.lstat(link).st_mode) == 0o600
    assert sorted(p.name for p in runtime.iterdir()) == ["8788.token"]  # no temp file left


def test_the_control_plane_does_not_follow_a_planted_token_link(
    tmp_path: Path, runtime: Path
) -> None:
    runtime.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (runtime / "47001.token").symlink_to(victim)
    plane = ControlPlane(approvals=None)
    asyncio.run(plane.start(47001))
    assert plane.token_file == runtime / "47001.token" and not plane.token_file.is_symlink()
    assert plane.token_file.read_text() == plane.token and victim.read_text() == "keep me"
    asyncio.run(plane.close())
    assert not (runtime / "47001.token").exists() and victim.read_text() == "keep me"
