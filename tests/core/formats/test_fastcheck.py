"""The two-process checksum agrees with the plain one, and catches tampering."""

from __future__ import annotations

import json

import pytest

from loom_core.formats import fastcheck
from loom_core.formats.canonical import checksum


def _doc(n: int) -> dict:
    log = [
        {
            "seq": i,
            "kind": "tool:t",
            "key": f"{i:012x}",
            "result": {"f": 1.5, "i": i, "s": "über ✓ 😀", "nan_free": [True, None, 1e16]},
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


@pytest.mark.parametrize("n", [0, 1, 2, 7])
@pytest.mark.parametrize("share", [0.5, 0.65, 1.0])
def test_parallel_equals_serial(monkeypatch: pytest.MonkeyPatch, n: int, share: float) -> None:
    monkeypatch.setattr(fastcheck, "MIN_PARALLEL_BYTES", 0)
    doc = _doc(n)
    data = json.dumps(doc, indent=2).encode()
    job = fastcheck.ParallelChecksum.start(data, child_share=share)
    assert job is not None
    assert job.result() == doc["checksum"]


def test_tampering_changes_the_parallel_checksum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastcheck, "MIN_PARALLEL_BYTES", 0)
    doc = _doc(6)
    doc["log"][5]["result"]["s"] = "edited"
    assert fastcheck.parallel_checksum(json.dumps(doc).encode()) != doc["checksum"]


def test_not_a_trace_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastcheck, "MIN_PARALLEL_BYTES", 0)
    job = fastcheck.ParallelChecksum.start(b'{"a": 1}\n{"b": 2}\n')
    assert job is not None and job.result() is None  # the caller then checks serially
