"""The filter's scan before the text index (issue 24): the steps' bytes searched where they
lie give exactly the answers of the lowercased text column, on generated runs, the sample
and real third-party files, without building the column; a scan that folded case wrongly
would be caught."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom_core.formats.loader import load
from loom_core.views import raw_scan, step_index, text_index
from loom_core.views.filtering import filter_steps
from loom_core.views.timeline import Timeline, build_timeline
from tests.core.formats.real_world import real_files
from tests.core.views.test_filtering_columns import QUERIES, RESOURCE, _reference, _trace
from tests.core.views.test_text_index import _counting_builds

HYPERSCAN = raw_scan._hyperscan()
pytestmark = pytest.mark.skipif(HYPERSCAN is None, reason="no Hyperscan build here")

TRICKY = ['"', "\\", '"\\"', "é", "É", "Brûlée", "BRÛLÉE", "\\u00e9", "\x00", 'ls"}', "\n"]
REAL = [
    *real_files("claude-code", ".jsonl")[:2],
    *real_files("inspect", ".eval")[:2],
    *real_files("otlp", ".json")[:3],
]


def _answers(tl: Timeline, texts: list[str]) -> list[list[int] | None]:
    out = []
    for text in texts:
        rows = filter_steps(tl, text)
        out.append(None if rows is None else list(rows))
    return out


def _column_answers(tl: Timeline, texts: list[str], mp: pytest.MonkeyPatch) -> list[Any]:
    """The same queries answered by the text column (the scan turned off)."""
    with mp.context() as off:
        off.setattr(raw_scan, "_hyperscan", lambda: None)
        fresh = build_timeline(tl.doc)  # a new step index: no column kept from before
        return _answers(fresh, texts)


@pytest.mark.parametrize("source", ["synthetic", "sample"])
def test_the_scan_answers_as_the_column_without_building_it(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 37)  # many chunks
    path = RESOURCE
    if source == "synthetic":
        path = tmp_path / "t.loom.json"
        path.write_text(json.dumps(_trace(400), ensure_ascii=False))
    tl = build_timeline(load(path))
    built = _counting_builds(monkeypatch)
    texts = QUERIES + TRICKY
    with monkeypatch.context() as every:
        every.setattr(raw_scan, "COMMON", 10.0)  # no text is common: the scan answers all
        scanned = _answers(tl, texts)
    assert built == []  # no text column: the payloads were searched where they lie
    assert scanned == [
        _reference(tl, t) if r is not None else None for t, r in zip(texts, scanned, strict=True)
    ]
    assert scanned == _column_answers(tl, texts, monkeypatch)
    long = "x" * 20_000  # longer than Hyperscan takes: the column answers
    assert _answers(tl, [long]) == [_reference(tl, long)]


def test_a_common_text_is_left_to_the_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 300)  # more than the least a scan stops at
    path = tmp_path / "t.loom.json"
    path.write_text(json.dumps(_trace(600), ensure_ascii=False))
    tl = build_timeline(load(path))
    built = _counting_builds(monkeypatch)
    rare = filter_steps(tl, "boom")
    assert built == []
    common = filter_steps(tl, "thinking")  # half the steps: the scan stops, the column answers
    assert built == [first for first, _stop in step_index.step_index(tl).bounds(tl, len(tl))]
    assert (list(rare or ()), list(common or ())) == (
        _reference(tl, "boom"),
        _reference(tl, "thinking"),
    )


def _counting_parts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []
    real = step_index.StepIndex.parts

    def parts(self: step_index.StepIndex, tl: Timeline, first: int, stop: int) -> Any:
        made.append(first)
        return real(self, tl, first, stop)

    monkeypatch.setattr(step_index.StepIndex, "parts", parts)
    return made


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Timeline:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 37)
    path = tmp_path / "t.loom.json"
    path.write_text(json.dumps(_trace(200), ensure_ascii=False))
    return build_timeline(load(path))


def test_a_second_query_reads_the_kept_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tl = _run(tmp_path, monkeypatch)
    made = _counting_parts(monkeypatch)
    assert filter_steps(tl, "paris") == filter_steps(tl, "paris")
    chunks = len(list(step_index.step_index(tl).bounds(tl, len(tl))))
    assert sorted(made) == sorted(set(made)) and len(made) == chunks  # each chunk's once


def test_the_index_build_leaves_the_parts_for_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query while the index is being built, or one it cannot narrow, makes no parts:
    the build made each chunk's first (once: its joins reuse them)."""
    tl = _run(tmp_path, monkeypatch)
    made = _counting_parts(monkeypatch)
    built = text_index.build(tl)
    chunks = len(list(step_index.step_index(tl).bounds(tl, len(tl))))
    assert built is not None and len(made) == chunks
    rows = filter_steps(tl, "paris")  # (the index is not in use: built, not ensured)
    assert len(made) == chunks and list(rows or ()) == _reference(tl, "paris")


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_real_files_get_the_columns_answers(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tl = build_timeline(load(str(path)))
    words = {w for s in range(0, len(tl), max(1, len(tl) // 7)) for w in _words(tl, s)}
    kinds = [tl.kind_name(0)] if len(tl) else []
    texts = sorted(words)[:12] + TRICKY + ["Error", "TOOL", '"role"', "the", *kinds]
    scanned = _answers(tl, texts)
    assert scanned == _column_answers(tl, texts, monkeypatch)
    assert any(r for r in scanned) or not len(tl)  # something found: the comparison means something


def _words(tl: Timeline, step: int) -> list[str]:
    """A few words of a step's own text, as a user would type them back."""
    texts = step_index.step_index(tl).step_texts(tl, [step])
    return [w for w in texts[0].decode("utf-8", "replace").split() if 2 < len(w) < 20][:3]


def test_a_scan_that_folds_no_case_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparisons above fail on a wrong scan: here one compiled without case folding."""
    path = tmp_path / "t.loom.json"
    path.write_text(json.dumps(_trace(200), ensure_ascii=False))
    tl = build_timeline(load(path))
    monkeypatch.setattr(HYPERSCAN, "HS_FLAG_CASELESS", 0)
    texts = ["paris", "error", "brûlée"]
    assert _answers(tl, texts) != [_reference(tl, t) for t in texts]


_TEXT = st.text(alphabet='aAbBéÉ"\\/\n\x00ü{}: x', max_size=12)


def _write(folder: Path, texts: list[str], kinds: list[str]) -> Path:
    log = [
        {"seq": i, "kind": kinds[i % len(kinds)], "key": f"k{i}", "result": text, "depth": 0}
        for i, text in enumerate(texts)
    ]
    doc = {"version": 2, "model": "m", "prompt": texts[0], "output": "", "log": log}
    path = folder / "t.loom.json"
    path.write_text(json.dumps(doc, ensure_ascii=bool(len(texts) % 2)))
    return path


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(_TEXT, min_size=1, max_size=30),
    needles=st.lists(st.text(alphabet='aAbéÉ"\\/\n\x00ü{}:', min_size=1, max_size=4), max_size=2),
    kinds=st.lists(st.sampled_from(["model", "tool:Bash", "tool:é", "sample"]), min_size=1),
)
def test_any_text_gets_the_columns_answer(
    texts: list[str], needles: list[str], kinds: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as mp:
        mp.setattr(step_index, "CHUNK_STEPS", 5)
        tl = build_timeline(load(_write(Path(folder), texts, kinds)))
        queries = [*needles, json.dumps(" ".join(needles)), '"b\\"', 'l"', "ol:b", "elsa"]
        assert _answers(tl, queries) == _column_answers(tl, queries, mp)
