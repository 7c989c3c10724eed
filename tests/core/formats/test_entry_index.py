"""A big trace's raw entries come from the load's offset index, not a second parse.

The window shows an entry's exact JSON ("raw JSON"). A progressive load knows where
each run of entries is in the file, so an entry is found by offset and one run of a
few kilobytes here (megabytes in a real big run) is decoded; the whole document is
never split again. Every entry must be the bytes the full split gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.synth import synth_trace
from loom_core.formats import progressive
from loom_core.formats.document import Document
from loom_core.formats.loader import load
from tests.core.harness_runs import Recorded


@pytest.fixture
def small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's big-file path for small files, in runs of a few entries."""
    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    monkeypatch.setattr(progressive, "CHUNK_BYTES", 3000)


def _check(path: Path) -> Document:
    doc = progressive.load_progressive(str(path)).doc
    assert doc.entry_index is not None
    got = [doc.raw_entry(i) for i in (*range(len(doc)), 0, len(doc) - 1)]
    assert "_source_entries" not in doc.__dict__  # the document was not split again
    split = load(path)._source_entries
    assert split is not None
    want = [bytes(r) for r in split]
    assert got == [*want, want[0], want[-1]]
    return doc


def test_every_entry_of_a_synthetic_run(tmp_path: Path, small_runs: None) -> None:
    path = tmp_path / "synth.loom.json"
    path.write_text(json.dumps(synth_trace(400), indent=2))
    doc = _check(path)
    assert doc.entry_index is not None and len(doc.entry_index.ranges) > 10
    assert json.loads(doc.raw_entry(399))["seq"] == 399


def test_a_byte_order_mark_before_the_trace(tmp_path: Path, small_runs: None) -> None:
    path = tmp_path / "bom.loom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(synth_trace(120), indent=2).encode())
    _check(path)


def test_loom_harness_runs(harness_traces: dict[str, Recorded], small_runs: None) -> None:
    """Sub-agents, compaction, non-ASCII text: loom-harness's own files."""
    for recorded in harness_traces.values():
        _check(recorded.path)


def test_another_layout_has_no_index(tmp_path: Path, small_runs: None) -> None:
    """A trace on one line is not loom-harness's layout: the full split still answers."""
    path = tmp_path / "flat.loom.json"
    path.write_text(json.dumps(synth_trace(50)))
    doc = progressive.load_progressive(str(path)).doc
    assert doc.entry_index is None
    assert json.loads(doc.raw_entry(49))["seq"] == 49
