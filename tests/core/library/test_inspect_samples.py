"""Every sample of an Inspect AI ``.eval`` log is indexed, made by the real producer.

Why: the app opens a log at its first sample, but a search must find text that only a
later sample holds, and its hit must name that sample so it opens there. The log is one
run of the library whose totals are its samples' (see :mod:`loom_core.library.samples`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loom_core.formats.inspect_eval import each_sample, load_sample
from loom_core.library.index import Indexer
from loom_core.library.search import Library
from loom_core.views.summary import usage_and_cost
from tests.core.clis import core
from tests.inspect_producer import eval_log


@pytest.fixture(scope="module")
def log() -> Path:
    return eval_log()


@pytest.fixture
def indexed(log: Path, tmp_path: Path) -> Path:
    """A copy of the log, indexed into the test's library."""
    path = tmp_path / "logs" / log.name
    path.parent.mkdir()
    shutil.copy(log, path)
    assert Indexer().index_file(path) == "indexed"
    return path


def test_each_sample_reads_what_load_sample_reads(log: Path) -> None:
    data = log.read_bytes()
    docs = list(each_sample(data, str(log)))
    keys = [(d.extra["sample"]["id"], d.extra["sample"]["epoch"]) for d in docs]
    assert keys == [(s["id"], s["epoch"]) for s in docs[0].extra["samples"]]
    assert len(keys) == 4
    again = load_sample(data, str(log), *keys[3])
    assert [e.kind for e in docs[3].effects] == [e.kind for e in again.effects]
    assert docs[3].extra == again.extra


def test_text_only_in_a_later_sample_is_found_and_names_it(indexed: Path) -> None:
    """``2+3`` is sample ``a``'s question; the first sample the log opens at is ``7``."""
    with Library() as lib:
        hits = lib.search('"2+3"')
        secret = lib.search("tool:secret")
    assert {h.sample for h in hits} == {"a:1", "a:2"}
    assert all(h.path == str(indexed) for h in hits)
    assert hits[0].sample_label() == "sample a · epoch 1"
    # a step hit in the last sample: its seq is that sample's step
    last = [h for h in secret if h.sample == "7:2"]
    assert last and all(h.seq is not None for h in last)
    doc = load_sample(indexed.read_bytes(), str(indexed), "7", 2)
    assert {h.seq for h in last} <= {e.seq for e in doc.effects if e.seq is not None}


def test_the_log_is_one_run_whose_totals_are_its_samples(indexed: Path) -> None:
    docs = list(each_sample(indexed.read_bytes(), str(indexed)))
    with Library() as lib:
        runs = lib.runs()
    assert [r.path for r in runs] == [str(indexed)]
    run = runs[0]
    assert run.steps == sum(len(d.effects) for d in docs)
    usage = [usage_and_cost(d) for d in docs]
    assert (run.tokens_in, run.tokens_out) == (
        sum(u[0] for u in usage),
        sum(u[1] for u in usage),
    )
    assert run.title.startswith("And 1+1?")  # the first sample's question


def test_the_cli_prints_each_hits_sample(indexed: Path) -> None:
    done = core("runs", "search", '"2+3"')
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and lines[0].startswith(f"{indexed}:prompt  sample a · epoch 1  ")
    hits = json.loads(core("runs", "search", '"2+3"', "--json").stdout)
    assert {h["sample"] for h in hits} == {"a:1", "a:2"}
