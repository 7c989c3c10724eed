"""The trigram text index (issue 24): the filter with it finds exactly what it finds without
it, reads only the text the index leaves (none for a text no step holds), and a run opened
again maps the index kept from the last open instead of building it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from loom_core.formats.loader import load
from loom_core.views import step_index, text_index
from loom_core.views.filtering import filter_steps
from loom_core.views.timeline import Timeline, build_timeline
from tests.core.views.test_filtering_columns import QUERIES, _reference, _trace

MORE = ["no step says this", "zz", "needle with", "tool:bash needle", "ERROR boom", "léé"]
MORE += ["go a b c", "more", "paris needle", "needle paris brûlée"]  # episodes; several terms


def _counting_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    built: list[int] = []
    real = step_index.StepIndex._build

    def build(self: step_index.StepIndex, tl: object, first: int, stop: int) -> object:
        built.append(first)
        return real(self, tl, first, stop)  # type: ignore[arg-type]

    monkeypatch.setattr(step_index.StepIndex, "_build", build)
    return built


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(step_index, "CHUNK_STEPS", 37)  # many chunks, blocks across their ends
    path = tmp_path / "t.loom.json"
    path.write_text(json.dumps(_trace(600), ensure_ascii=False))
    return path


def test_the_index_finds_what_the_scan_finds(run: Path, tmp_path: Path) -> None:
    tl = build_timeline(load(run))
    assert text_index.ensure(tl, str(tmp_path / "idx")) is not None
    assert step_index.step_index(tl).text_index is not None
    for text in QUERIES + MORE:
        rows = filter_steps(tl, text)
        assert (rows if rows is None else list(rows)) in (_reference(tl, text), None), text


def test_an_index_built_in_pieces_finds_the_same(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text is indexed a piece of a chunk at a time (its work arrays bounded): pieces of
    a few steps each, cut between steps, lose no trigram a query needs (only those across
    two steps' texts, which hold the separator no needle holds) and count the same
    frequent words."""
    tl = build_timeline(load(run))
    whole = text_index.build(tl)
    monkeypatch.setattr(text_index, "PIECE_BYTES", 300)
    index = step_index.step_index(tl)
    for first, stop in index.bounds(tl, len(tl)):
        chunk = index.chunk(tl, first, stop, keep=False)
        pieces = list(text_index._pieces(chunk))
        assert len(pieces) > 1 and b"".join(p.blob for p in pieces) == chunk.blob
        assert [p.first for p in pieces] == sorted({p.first for p in pieces})
        assert pieces[-1].stop == chunk.stop
    pieced = text_index.build(tl)
    assert whole is not None and pieced is not None
    assert sorted(pieced.tokens.tokens) == sorted(whole.tokens.tokens)
    assert not (pieced.bits & ~whole.bits).any()  # no bit the whole chunks did not set
    index.text_index = pieced
    for text in QUERIES + MORE:
        rows = filter_steps(tl, text)
        assert (rows if rows is None else list(rows)) in (_reference(tl, text), None), text


def test_only_the_text_the_index_leaves_is_read(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tl = build_timeline(load(run))
    text_index.ensure(tl, str(tmp_path / "idx"))
    built = _counting_builds(monkeypatch)
    none = filter_steps(tl, "no step says this")
    assert none is not None and list(none) == []
    assert built == []  # nothing read: the index says no step can hold it
    rows = filter_steps(tl, "needle with space")
    chunks = len(list(step_index.step_index(tl).bounds(tl, len(tl))))
    assert rows is not None and list(rows) == _reference(tl, "needle with space")
    assert len(built) < chunks  # the chunks with a few candidates: those steps alone


def test_the_steps_the_index_leaves_are_searched_as_their_own_texts(run: Path) -> None:
    """The few steps of a chunk the index leaves are joined into one text and searched at
    once: each step's part of it is that step's own text, user steps included, whatever
    steps are asked (not one run of them), so a match is never moved to a neighbour."""
    tl = build_timeline(load(run))
    every = list(range(len(tl)))
    for steps in (every, every[::7], every[3::11], [0], []):
        texts = step_index.step_index(tl).step_texts(tl, steps)
        assert texts == [_own_text(tl, s) for s in steps]
    assert any(tl.effect_of[s] < 0 for s in every[::7])  # a user step among them


def _own_text(tl: Timeline, step: int) -> bytes:
    """A step's text as the filter searches it, read step by step."""
    e = tl.effect_of[step]
    if e < 0:
        return tl.doc.episodes[tl.episode_of[step]].lower().encode()
    raw = tl.doc.effects[e].result
    return ((b"" if raw is None else bytes(raw)) + tl.kind_name(step).encode()).lower()


def test_a_second_open_maps_the_kept_index(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = str(tmp_path / "idx")
    first = text_index.ensure(build_timeline(load(run)), folder)
    assert first is not None and len(os.listdir(folder)) == 1

    def never(*_args: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(text_index, "build", never)
    tl = build_timeline(load(run))
    again = text_index.ensure(tl, folder)
    assert again is not None and again.bits.tobytes() == first.bits.tobytes()
    assert list(filter_steps(tl, "paris") or []) == _reference(tl, "paris")
    monkeypatch.undo()
    os.utime(run, ns=(1, 1))  # the file changed: its old index is not its index
    assert text_index.ensure(build_timeline(load(run)), folder) is not None
    assert len(os.listdir(folder)) == 2


def test_a_damaged_index_file_is_not_used(run: Path, tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    tl = build_timeline(load(run))
    text_index.ensure(tl, str(folder))
    (kept,) = folder.iterdir()
    kept.write_bytes(kept.read_bytes()[:-1])  # cut short
    assert text_index.load(str(kept), len(tl)) is None
    kept.write_bytes(b"something else entirely")
    assert text_index.load(str(kept), len(tl)) is None
    again = text_index.ensure(build_timeline(load(run)), str(folder))  # built anew, kept again
    assert again is not None and text_index.load(str(kept), len(tl)) is not None


def test_the_kept_indexes_are_pruned_least_recently_used_first(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    folder.mkdir()
    for n, name in enumerate(("old", "used", "new")):
        (folder / name).write_bytes(b"x" * 100)
        os.utime(folder / name, ns=(n, n))
    os.utime(folder / "used", ns=(10, 10))  # mapped again lately
    text_index.prune(str(folder), keep=str(folder / "new"), limit=250)
    assert sorted(p.name for p in folder.iterdir()) == ["new", "used"]
