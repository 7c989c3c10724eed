"""The two-process checksum agrees with the plain one whoever computes which chunk, also when
the child dies or never starts, and catches tampering; the child is always reaped."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from loom_core.formats import checksum_plan, fastcheck
from loom_core.formats.canonical import checksum
from tests.core.children import no_children_left, wait_until_alone


def _doc(n: int) -> dict:
    log = [
        {
            "seq": i,
            "kind": "tool:t",
            "key": f"{i:012x}",
            "result": {"f": 1.5, "i": i, "s": "über ✓ 😀\x7f", "nan_free": [True, None, 1e16]},
            "depth": 0,
        }
        for i in range(n)
    ]
    wire = [{"content": [{"type": "text", "text": f"r{i}"}]} for i in range(n // 2)]
    doc = {
        "version": 2,
        "recorded_via": "proxy",
        "log": log,
        "wire": wire,
        "prompt": "p",
        "output": "",
        "extra_member": {"z": 1, "a": [3.0, -0.0]},
    }
    doc["checksum"] = checksum(doc)
    return doc


@pytest.fixture
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork for any size and cut every list into one-item chunks: many chunks, small files;
    no other thread running (the checksum forks only a one-thread process)."""
    left = wait_until_alone()
    assert not left, f"threads still running, so the checksum would not fork: {left}"
    monkeypatch.setattr(fastcheck, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(checksum_plan, "CHUNK_BYTES", 1)


@pytest.mark.parametrize("n", [1, 2, 7, 40])
@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("help_below", [0.0, 0.6, 2.0])  # the caller never / may / must help
def test_parallel_equals_serial_and_python(
    tiny_chunks: None,
    monkeypatch: pytest.MonkeyPatch,
    n: int,
    indent: int | None,
    help_below: float,
) -> None:
    monkeypatch.setattr(fastcheck, "HELP_BELOW", help_below)
    doc = _doc(n)
    data = json.dumps(doc, indent=indent).encode()
    job = fastcheck.ParallelChecksum.start(data)
    assert job is not None and len(job.plan.chunks) == n + n // 2
    assert job.result() == doc["checksum"] == fastcheck.serial_checksum(data)
    assert no_children_left()


@pytest.mark.parametrize(
    "members",
    [
        {"log": [], "wire": [{"a": 1}, {"b": [1.25, "é"]}, {}]},  # an empty bulky list
        {"log": {"not": "a list"}, "wire": [[1, 2], [3], ["ü"], [None]]},  # log hashed whole
        {"log": [{"k": 1}, 2, "three", [4.0], None, 1e300], "signature": "s", "a": {"b": []}},
        {"log": [{"b": 1, "a": 2, "b ": 3}, {"\u2028": "\U0001f600"}, {"": ""}], "z": None},
    ],
)
def test_odd_members_equal_python(tiny_chunks: None, members: dict[str, Any]) -> None:
    doc = {"version": 2, **members}
    doc["checksum"] = checksum(doc)
    data = json.dumps(doc, ensure_ascii=False).encode()
    job = fastcheck.ParallelChecksum.start(data)
    assert job is not None
    assert job.result() == doc["checksum"] == fastcheck.serial_checksum(data)


@pytest.mark.parametrize("help_below", [0.0, 2.0])
def test_a_child_that_dies_midway_changes_nothing(
    tiny_chunks: None, monkeypatch: pytest.MonkeyPatch, help_below: float
) -> None:
    monkeypatch.setattr(fastcheck, "HELP_BELOW", help_below)
    parent, real = os.getpid(), checksum_plan.canon_items
    done = []

    def dying(raws: list) -> bytes:
        if os.getpid() != parent and len(done) == 3:
            os._exit(9)  # the child dies after reporting three chunks
        done.append(1)
        return real(raws)

    monkeypatch.setattr(fastcheck, "canon_items", dying)
    doc = _doc(30)
    job = fastcheck.ParallelChecksum.start(json.dumps(doc).encode())
    assert job is not None
    time.sleep(0.2)  # let it die first (the result is the same if it has not)
    assert job.result() == doc["checksum"]
    assert no_children_left()


@pytest.mark.parametrize("help_below", [0.0, 2.0])
def test_chunks_the_child_claimed_but_left_are_supplied(
    tiny_chunks: None, monkeypatch: pytest.MonkeyPatch, help_below: float
) -> None:
    def front(plan: checksum_plan.Plan, claims: Any, hasher: checksum_plan.Hasher) -> int:
        fastcheck._CLAIM.pack_into(claims, 0, len(plan.chunks))  # claims them all (a stale
        for i in range(3):  # hint, say), but stops after three
            hasher.feed({i: checksum_plan.canon_items(plan.chunks[i])}.get)
        return 3

    monkeypatch.setattr(fastcheck, "HELP_BELOW", help_below)
    monkeypatch.setattr(fastcheck, "_front", front)
    doc = _doc(10)
    job = fastcheck.ParallelChecksum.start(json.dumps(doc).encode())
    assert job is not None
    assert job.result() == doc["checksum"]
    assert no_children_left()


def test_the_caller_does_every_chunk_when_the_child_is_slow(
    tiny_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def late_child(*_args: object) -> None:
        time.sleep(30)  # not started yet when the caller has claimed every chunk
        os._exit(0)

    monkeypatch.setattr(fastcheck, "_child", late_child)
    doc = _doc(12)
    job = fastcheck.ParallelChecksum.start(json.dumps(doc).encode())
    assert job is not None
    started = time.monotonic()
    assert job.result() == doc["checksum"]
    assert time.monotonic() - started < 20  # it did not wait for the child: it killed it
    assert no_children_left()


def test_close_reaps_the_child_and_frees_its_fds(tiny_chunks: None) -> None:
    fds = set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()
    job = fastcheck.ParallelChecksum.start(json.dumps(_doc(50)).encode())
    assert job is not None
    job.close()
    job.close()  # twice is harmless
    assert no_children_left()
    if fds:
        assert set(os.listdir("/proc/self/fd")) == fds


def test_tampering_changes_the_parallel_checksum(tiny_chunks: None) -> None:
    doc = _doc(6)
    doc["log"][5]["result"]["s"] = "edited"
    assert fastcheck.parallel_checksum(json.dumps(doc).encode()) != doc["checksum"]


@pytest.mark.parametrize(
    "data",
    [
        json.dumps({"version": 2, "log": [{"a": 1}, {"b": float("nan")}, {"c": 3}]}).encode(),
        b'{"a": 1}\n{"b": 2}\n',  # a journal
        b'{"log": [1, 2',  # cut short
    ],
)
def test_what_only_python_reads_gives_none(tiny_chunks: None, data: bytes) -> None:
    job = fastcheck.ParallelChecksum.start(data)
    assert job is not None and job.result() is None  # the caller then uses Python's reader
    assert fastcheck.parallel_checksum(data) is None
    assert no_children_left()


def test_what_is_no_json_object_does_not_fork(tiny_chunks: None) -> None:
    assert fastcheck.ParallelChecksum.start(b"[1, 2, 3]") is None
    assert fastcheck.ParallelChecksum.start(b"\xef\xbb\xbf{}") is None  # a BOM: Python's reader
    assert fastcheck.parallel_checksum(b' \n{"log": [1, 2]}') is not None  # small: serial
